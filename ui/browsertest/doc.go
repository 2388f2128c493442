// Package browsertest runs the bertlab page in headless Chromium (github.com/chromedp/chromedp):
// it builds the page's app.wasm (the UI, and the engine in a worker), serves it with the page's
// assets and a model folder from 127.0.0.1, and drives the page as a user would. The tests need
// Debian's chromium (apt-get install -y chromium chromium-driver) and fail without it; set
// BERTLAB_CHROME to use another binary and BERTLAB_SCREENSHOTS=DIR to keep the screenshots.
package browsertest
