//! Structured access log: one `tracing` event per request with method,
//! path, status, milliseconds and owner. Never the key, the body or the
//! query string (a query may carry a session name).

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

use crate::auth::Owner;

/// Middleware: logs each request once its response is ready.
pub async fn access_log(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let response = next.run(req).await;
    let owner = response.extensions().get::<Owner>().map(|o| o.0.clone());
    tracing::info!(
        target: "kith_server::access",
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        ms = format_args!("{:.2}", started.elapsed().as_secs_f64() * 1000.0),
        owner = owner.as_ref().map(|o| o.as_str()).unwrap_or("-"),
        "request"
    );
    response
}
