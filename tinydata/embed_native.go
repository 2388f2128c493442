//go:build !js

package tinydata

import "embed"

// Natively the whole data is embedded: about 9 MB, for pre-training and fine-tuning from the
// command line without a checkout.
//
//go:embed web pretrain sentiment pos cloze
var embedded embed.FS

const fullData = true
