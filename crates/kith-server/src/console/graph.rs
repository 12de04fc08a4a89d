//! A node's neighbourhood as a small picture: inline SVG (no script, no
//! image request), the node in the middle and its neighbours on a circle,
//! each a link to its own page, each line labelled with the link's type.

use std::f64::consts::PI;
use std::fmt::Write;

use kith::Node;

use super::html::{clip, esc};

/// Neighbours drawn at most (the page lists the rest).
pub const MAX_DRAWN: usize = 16;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 420.0;
const RADIUS: f64 = 160.0;

/// The colour of a node by its type: entities blue, claims green, notes grey.
fn fill(node: &Node) -> &'static str {
    match node.node_type {
        kith::NodeType::Entity => "#dbe6ff",
        kith::NodeType::Note => "#eceef2",
        _ => "#dcf5e6",
    }
}

/// The SVG of `center` and `neighbours` (each with the label of the link
/// to it, e.g. `HAS_FACT`).
pub fn neighbourhood(center: &Node, neighbours: &[(Node, String)]) -> String {
    let (cx, cy) = (WIDTH / 2.0, HEIGHT / 2.0);
    let mut out = format!(
        r##"<svg class="graph" id="graph" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="neighbourhood of {}">"##,
        esc(&clip(&center.content, 60))
    );
    let drawn = &neighbours[..neighbours.len().min(MAX_DRAWN)];
    let n = drawn.len().max(1) as f64;
    let mut nodes = String::new();
    for (i, (node, label)) in drawn.iter().enumerate() {
        // Start at the top and go round; a small offset keeps labels of
        // opposite nodes from sitting on the same line.
        let angle = -PI / 2.0 + 2.0 * PI * i as f64 / n + 0.15;
        let (x, y) = (cx + RADIUS * 1.45 * angle.cos(), cy + RADIUS * angle.sin());
        let _ = write!(
            out,
            r##"<line x1="{cx:.0}" y1="{cy:.0}" x2="{x:.0}" y2="{y:.0}" stroke="#9aa4b2" stroke-width="1.2"/><text x="{:.0}" y="{:.0}" font-size="9" fill="#667085" text-anchor="middle">{}</text>"##,
            (cx + x) / 2.0,
            (cy + y) / 2.0 - 3.0,
            esc(label)
        );
        let _ = write!(
            nodes,
            r##"<a href="/ui/nodes/{}"><title>{}</title><rect x="{:.0}" y="{:.0}" width="120" height="26" rx="6" fill="{}" stroke="#9aa4b2"/><text x="{x:.0}" y="{:.0}" font-size="11" text-anchor="middle" fill="#1d2330">{}</text></a>"##,
            node.id,
            esc(&node.content),
            x - 60.0,
            y - 13.0,
            fill(node),
            y + 4.0,
            esc(&clip(&node.content, 18))
        );
    }
    out.push_str(&nodes);
    let _ = write!(
        out,
        r##"<rect x="{:.0}" y="{:.0}" width="160" height="34" rx="8" fill="{}" stroke="#2f5bd3" stroke-width="2"/><text x="{cx:.0}" y="{:.0}" font-size="13" font-weight="600" text-anchor="middle" fill="#1d2330">{}</text></svg>"##,
        cx - 80.0,
        cy - 17.0,
        fill(center),
        cy + 5.0,
        esc(&clip(&center.content, 22))
    );
    out
}
