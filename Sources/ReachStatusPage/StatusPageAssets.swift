import ReachAPI

/// The page's style sheet and script, served by reachd from routes of its own: no external asset,
/// no build step, and a Content-Security-Policy that allows nothing else.
///
/// They are Swift string literals rather than SwiftPM resources: the binary stays one
/// self-contained file (the Debian package ships no resource bundle beside it), and serving them
/// needs neither Foundation's `Bundle` nor a file read at request time.
package enum StatusPageAssets {
    /// Where the style sheet is served.
    package static let stylePath = StatusAPI.pageStyle.path
    /// Where the script is served.
    package static let scriptPath = StatusAPI.pageScript.path

    /// The page's Content-Security-Policy: its own script, style, images and connections only; no
    /// inline script or style, no frames, no forms, no plugins.
    package static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}
