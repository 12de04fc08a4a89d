//! MCP over stdin/stdout, one JSON-RPC message a line.
//!
//! rmcp's own line transport skips a line that is not JSON without a word
//! (it fears an error storm); JSON-RPC 2.0 asks for a `-32700 Parse error`
//! reply with a null id, and a client that sent a broken frame should learn
//! so rather than wait forever. So the lines pass through here first: a
//! line that is not JSON is answered here, everything else goes to rmcp
//! (which answers a JSON value that is not a valid request with `-32600`).
//! One writer task owns stdout, so replies never interleave.

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use rmcp::ServiceExt;

use super::KithMcp;
use crate::ServerError;

/// Room for messages in flight between the pumps and rmcp.
const PIPE_BYTES: usize = 256 * 1024;

/// Serves `server` on `input`/`output` until the client closes `input` and
/// every reply is written.
pub async fn serve_lines<R, W>(server: KithMcp, input: R, output: W) -> Result<(), ServerError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_in) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (replies, replies_rx) = mpsc::channel::<String>(64);
    let reader = tokio::spawn(read_frames(input, to_rmcp, replies));
    let writer = tokio::spawn(write_frames(from_rmcp, replies_rx, output));
    let service = server
        .serve((rmcp_in, rmcp_out))
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))?;
    reader.abort();
    // rmcp has dropped its end: the writer drains what is left and stops.
    let written = writer
        .await
        .map_err(|e| ServerError::Mcp(format!("the stdout writer failed: {e}")))?;
    written.map_err(|source| ServerError::Io {
        context: "writing to stdout".into(),
        source,
    })
}

/// Reads lines from the client: JSON goes on to rmcp, anything else is
/// answered with a parse error. Ends at the client's end of input, which
/// then reaches rmcp as its end of input.
async fn read_frames<R>(
    input: R,
    mut to_rmcp: tokio::io::DuplexStream,
    replies: mpsc::Sender<String>,
) where
    R: AsyncRead + Unpin,
{
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = trim_line(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<serde_json::Value>(text) {
            Ok(_) => {
                if to_rmcp.write_all(text).await.is_err() || to_rmcp.write_all(b"\n").await.is_err()
                {
                    break;
                }
            }
            Err(e) => {
                let reply = json!({
                    "jsonrpc": "2.0",
                    "id": null,
                    "error": {"code": -32700, "message": format!("Parse error: {e}")},
                });
                if replies.send(reply.to_string()).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// A line without its `\n` (and `\r`).
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Writes rmcp's replies and the parse errors to the client, one a line.
async fn write_frames<W>(
    from_rmcp: tokio::io::DuplexStream,
    mut replies: mpsc::Receiver<String>,
    mut output: W,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut replies_open = true;
    loop {
        tokio::select! {
            // Cancel-safe as used: a partly read line stays in `line` and
            // the next call goes on reading it; it is written only whole.
            n = from_rmcp.read_until(b'\n', &mut line) => {
                let n = n?;
                output.write_all(&line).await?;
                line.clear();
                if n == 0 {
                    break;
                }
            }
            reply = replies.recv(), if replies_open => match reply {
                Some(reply) => {
                    output.write_all(reply.as_bytes()).await?;
                    output.write_all(b"\n").await?;
                }
                None => replies_open = false,
            },
        }
        output.flush().await?;
    }
    output.flush().await
}
