//! The console's stylesheet and script, compiled into the binary (no
//! Node toolchain, nothing to install beside `kith`).

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

const CSS: &str = include_str!("assets/console.css");
const JS: &str = include_str!("assets/console.js");

/// `GET /ui/assets/{name}`: `console.css` or `console.js`; anything else 404.
pub async fn serve(Path(name): Path<String>) -> Response {
    let (ctype, body) = match name.as_str() {
        "console.css" => ("text/css; charset=utf-8", CSS),
        "console.js" => ("text/javascript; charset=utf-8", JS),
        _ => return (StatusCode::NOT_FOUND, "no such asset").into_response(),
    };
    ([(header::CONTENT_TYPE, ctype)], body).into_response()
}
