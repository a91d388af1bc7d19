//! The operators' dashboard: one static page (`GET /`) and its files (`GET /assets/{file}`),
//! shipped in the crate (`include_str!` of `assets/`), plain HTML, CSS and JavaScript
//! modules with no build step, no CDN and no vendored library. The page holds no data: its
//! script reads the JSON routes and the event stream like any client (with the token the
//! operator enters, when the server needs one), so the files are served without a token.
//!
//! Every file is answered with its content type, `Cache-Control: no-cache` and an `ETag`
//! (a hash of its bytes, computed at compile time: a browser revalidates and gets 304 until
//! the crate changes), and the security headers (see [`SECURITY_HEADERS`]): a strict
//! Content-Security-Policy (the files of this origin only, no inline script or style, no
//! framing), `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY` (the control buttons
//! cannot be clicked through another site's frame) and `Referrer-Policy: no-referrer`.
//! The `Host` check and the request budget apply as to every route.

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// One file of the dashboard, as shipped.
struct Asset {
    /// Its name under `/assets/` (`index.html` is served at `/`).
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
    /// Its `ETag` value, quoted.
    etag: &'static str,
}

/// FNV-1a (64 bits) of `bytes`, for the `ETag`s (not a security hash: it only has to
/// change when a file does).
const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

/// `"` + 16 hex digits + `"`: an `ETag` value, at compile time.
const fn etag(body: &str) -> [u8; 18] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = fnv1a(body.as_bytes());
    let mut out = [b'"'; 18];
    let mut i = 0;
    while i < 16 {
        out[1 + i] = HEX[((hash >> (60 - 4 * i)) & 0xf) as usize];
        i += 1;
    }
    out
}

/// Declares the shipped files: `(const name, file, content type)`.
macro_rules! assets {
    ($(($konst:ident, $file:literal, $type:literal)),* $(,)?) => {
        $(
            const $konst: Asset = {
                const BODY: &str = include_str!(concat!("assets/", $file));
                const TAG: [u8; 18] = etag(BODY);
                Asset {
                    name: $file,
                    content_type: $type,
                    body: BODY,
                    etag: match std::str::from_utf8(&TAG) {
                        Ok(tag) => tag,
                        Err(_) => panic!("an ETag is ASCII"),
                    },
                }
            };
        )*
        /// Every file, the page first.
        const ASSETS: &[Asset] = &[$($konst),*];
    };
}

assets![
    (INDEX, "index.html", "text/html; charset=utf-8"),
    (STYLE, "style.css", "text/css; charset=utf-8"),
    (APP, "app.js", "text/javascript; charset=utf-8"),
    (API, "api.js", "text/javascript; charset=utf-8"),
    (STREAM, "stream.js", "text/javascript; charset=utf-8"),
    (TASKS, "tasks.js", "text/javascript; charset=utf-8"),
    (CONTROL, "control.js", "text/javascript; charset=utf-8"),
    (DOM, "dom.js", "text/javascript; charset=utf-8"),
];

/// The headers of every dashboard file. The policy allows this origin's files and
/// requests only: no inline script or style (the page has none), no plugins, no framing
/// (`frame-ancestors 'none'`, and `X-Frame-Options: DENY` for older browsers: OWASP's
/// clickjacking defence), no `<base>` and no form posts elsewhere.
pub(crate) const SECURITY_HEADERS: [(&str, &str); 4] = [
    (
        "content-security-policy",
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
];

/// Whether `path` is one of the dashboard's static routes (served without a token).
pub(crate) fn is_static(path: &str) -> bool {
    path == "/" || path.starts_with("/assets/")
}

/// `GET /`: the page.
pub(crate) async fn page(headers: HeaderMap) -> Response {
    answer(&INDEX, &headers)
}

/// `GET /assets/{file}`: a script or the style; 404 `unknown_asset` for any other name.
pub(crate) async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    match ASSETS
        .iter()
        .find(|asset| asset.name == file && asset.name != INDEX.name)
    {
        Some(asset) => answer(asset, &headers),
        None => ApiError::not_found(
            "unknown_asset",
            format!(
                "the dashboard has no file {}",
                crate::bounds::cap(&file, 128)
            ),
        )
        .into_response(),
    }
}

/// The file, or 304 when the request's `If-None-Match` names its current `ETag`.
fn answer(asset: &Asset, request: &HeaderMap) -> Response {
    let fresh = request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == asset.etag || tag == "*");
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(asset.content_type),
            )],
            asset.body,
        )
            .into_response()
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::ETAG, HeaderValue::from_static(asset.etag));
    for (name, value) in SECURITY_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_and_style_the_page_names_is_served_and_every_file_is_named() {
        // The page names the style and the entry script; the modules import the rest.
        let mut named = Vec::new();
        for asset in ASSETS {
            for reference in asset.body.split(['"', '\'']) {
                if let Some(file) = reference
                    .strip_prefix("assets/")
                    .or_else(|| reference.strip_prefix("./"))
                    && (file.ends_with(".js") || file.ends_with(".css"))
                {
                    named.push(file.to_owned());
                }
            }
        }
        for file in &named {
            assert!(
                ASSETS.iter().any(|asset| asset.name == file),
                "{file} is referenced but not shipped"
            );
        }
        for asset in ASSETS.iter().skip(1) {
            assert!(
                named.iter().any(|file| file == asset.name),
                "{} is shipped but nothing references it",
                asset.name
            );
        }
    }

    #[test]
    fn etags_are_quoted_hex_and_differ_between_files() {
        for asset in ASSETS {
            assert_eq!(asset.etag.len(), 18);
            assert!(asset.etag.starts_with('"') && asset.etag.ends_with('"'));
        }
        let mut tags: Vec<&str> = ASSETS.iter().map(|asset| asset.etag).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), ASSETS.len());
    }

    #[test]
    fn the_page_has_no_inline_script_or_style() {
        let page = INDEX.body;
        assert!(!page.contains("<style"), "inline style");
        assert!(!page.contains(" style="), "style attribute");
        // An inline handler is an attribute ` on<event>=`.
        for (at, _) in page.match_indices(" on") {
            let rest = &page[at + 3..];
            let name_end = rest
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            assert!(
                name_end == 0 || !rest[name_end..].starts_with('='),
                "inline handler at byte {at}"
            );
        }
        for script in page.split("<script").skip(1) {
            assert!(script.contains("src="), "inline script");
        }
    }
}
