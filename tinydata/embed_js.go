//go:build js

package tinydata

import "embed"

// The browser build carries only the small sample: the page must stay small to download.
//
//go:embed web
var embedded embed.FS

const fullData = false
