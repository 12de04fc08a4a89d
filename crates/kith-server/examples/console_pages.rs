//! How long the web console's pages take on a big memory: builds a pack of
//! N messages (default 100,000) in sessions of 100, one in 20 extracted
//! with the offline heuristic (no embeddings), serves it, logs in, and
//! times each page from a client on loopback (median and worst of 5
//! requests).
//!
//! ```sh
//! cargo run --release -p kith-server --example console_pages -- 100000 [PACK_DIR]
//! ```
//!
//! With `PACK_DIR`, a pack built there before is reused (it is built there
//! when it does not exist yet).

use std::sync::Arc;
use std::time::{Duration, Instant};

use kith::ingest::IngestOptions;
use kith::{EventInput, Memory, NodeQuery, NodeType, OwnerId};
use kith_server::{ApiKeys, Auth};

const KEY: &str = "console-bench-key-0123456789";
/// One message in this many is extracted (see `build`).
const EXTRACTED: usize = 20;
const NAMES: [&str; 12] = [
    "Maya", "Jordan", "Sam", "Alex", "Priya", "Tomas", "Lena", "Omar", "Yuki", "Nora", "Felix",
    "Ines",
];
const CITIES: [&str; 8] = [
    "Lisbon", "Berlin", "Porto", "Seoul", "Lagos", "Quito", "Oslo", "Hanoi",
];
const PLACES: [&str; 8] = [
    "Northwind",
    "Contoso",
    "Fabrikam",
    "Initech",
    "Globex",
    "Umbrella",
    "Hooli",
    "Vandelay",
];

/// The `i`th message: varied enough for the heuristic to find people,
/// places, employers and preferences.
fn message(i: usize) -> (String, String) {
    let speaker = NAMES[i % NAMES.len()];
    let other = NAMES[(i / 7) % NAMES.len()];
    let city = CITIES[(i / 3) % CITIES.len()];
    let place = PLACES[(i / 5) % PLACES.len()];
    let text = match i % 6 {
        0 => format!("I moved to {city} in September."),
        1 => format!("I work at {place} as a designer."),
        2 => format!("{other} loves the trams of {city}."),
        3 => format!("Yesterday I met {other} at the {place} office."),
        4 => format!("My favourite food is pasta, said on day {i}."),
        _ => format!("We talked about {city} and {place} for a while, message {i}."),
    };
    (speaker.to_string(), text)
}

fn build(dir: &std::path::Path, n: usize) -> Memory {
    if dir.join("manifest.json").exists() {
        println!("reusing {}", dir.display());
        return Memory::open(dir).expect("the pack opens");
    }
    let m = Memory::init(dir).expect("a new pack");
    let started = Instant::now();
    let batch = 1000;
    for start in (0..n).step_by(batch) {
        let inputs: Vec<EventInput> = (start..(start + batch).min(n))
            .map(|i| {
                let (speaker, text) = message(i);
                let mut input = EventInput::new("user", &text);
                input.owner_id = Some("alice".into());
                input.speaker = Some(speaker);
                input.session_id = Some(format!("session-{:04}", i / 100));
                input.event_time = Some(format!(
                    "2025-{:02}-{:02}T{:02}:{:02}:00+00:00",
                    1 + (i / 100) % 12,
                    1 + (i / 100) % 28,
                    (i / 60) % 24,
                    i % 60
                ));
                input
            })
            .collect();
        // Extraction runs at tens of messages a second with the heuristic
        // (each its own transaction and journal records), so one message in
        // EXTRACTED is ingested and the rest only stored: every message is
        // a memory (a note), and the entities and claims come from the
        // extracted ones.
        let (extract, store): (Vec<_>, Vec<_>) = inputs
            .into_iter()
            .enumerate()
            .partition(|(i, _)| i % EXTRACTED == 0);
        m.ingest_batch(
            extract.into_iter().map(|(_, x)| x).collect(),
            IngestOptions::default(),
        )
        .expect("ingested");
        m.store_batch(store.into_iter().map(|(_, x)| x).collect())
            .expect("stored");
        if (start / batch) % 10 == 9 {
            println!(
                "{} messages in {:.0} s",
                start + batch,
                started.elapsed().as_secs_f64()
            );
        }
    }
    m
}

struct Client {
    base: String,
    cookie: String,
    agent: ureq::Agent,
}

impl Client {
    fn get(&self, path: &str) -> (u16, String) {
        let mut r = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .call()
            .expect("an answer");
        (
            r.status().as_u16(),
            r.body_mut().read_to_string().unwrap_or_default(),
        )
    }

    fn post(&self, path: &str, body: &str) -> (u16, String) {
        let mut r = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .send(body)
            .expect("an answer");
        (
            r.status().as_u16(),
            r.body_mut().read_to_string().unwrap_or_default(),
        )
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map(|a| a.parse().expect("a number of messages"))
        .unwrap_or(100_000);
    let kept = args.next().map(std::path::PathBuf::from);
    let temp = tempfile::tempdir().expect("a directory");
    let dir = kept.unwrap_or_else(|| temp.path().join("p.kith"));
    let memory = build(&dir, n);
    let owner = OwnerId::new("alice").expect("an owner");
    let stats = memory.stats(Some(&owner)).expect("stats");
    println!(
        "pack: {} messages, {} sessions, nodes {:?}",
        stats.events, stats.sessions, stats.nodes_by_type
    );
    let entities = memory
        .nodes(&NodeQuery {
            owner: Some(owner.clone()),
            node_types: vec![NodeType::Entity],
            limit: 1000,
            ..NodeQuery::default()
        })
        .expect("entities");
    let maya = entities
        .iter()
        .find(|e| e.node.content == "Maya")
        .map(|e| e.node.id)
        .expect("Maya is an entity");
    let turn = memory
        .events(&kith::EventQuery {
            owner: Some(owner.clone()),
            limit: 1,
            ..kith::EventQuery::default()
        })
        .expect("events")[0]
        .event
        .id;

    let keys = ApiKeys::parse_env(&format!("{KEY}:alice")).expect("a key");
    let memory = Arc::new(memory);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().expect("a runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a port");
            tx.send(listener.local_addr().expect("an address"))
                .expect("sent");
            kith_server::serve(
                listener,
                memory,
                Auth::Keys(keys),
                std::future::pending::<()>(),
            )
            .await
            .expect("served");
        });
    });
    let addr = rx.recv().expect("the address");
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .new_agent();
    let base = format!("http://{addr}");
    let login = agent
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .send(format!("key={KEY}"))
        .expect("logged in");
    let cookie = login
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("a cookie")
        .to_string();
    let client = Client {
        base,
        cookie,
        agent,
    };
    let (_, overview) = client.get("/ui");
    let marker = r#"name="csrf" value=""#;
    let at = overview.find(marker).expect("a CSRF field") + marker.len();
    let csrf = overview[at..]
        .split('"')
        .next()
        .expect("a token")
        .to_string();

    let gets = [
        "/ui".to_string(),
        "/ui/conversation".to_string(),
        // A session in the middle of the log.
        format!("/ui/conversation?session=session-{:04}", n / 200),
        format!("/ui/turns/{turn}"),
        "/ui/conversation?q=Lisbon+trams".to_string(),
        "/ui/entities".to_string(),
        "/ui/entities?q=Maya".to_string(),
        format!("/ui/nodes/{maya}"),
        "/ui/inbox".to_string(),
        "/ui/journal".to_string(),
    ];
    println!("| page | median ms | worst ms | bytes |");
    println!("|---|---|---|---|");
    let time = |label: &str, f: &dyn Fn() -> (u16, String)| {
        let mut ms = Vec::new();
        let mut bytes = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let (status, body) = f();
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(status, 200, "{label}: {body}");
            bytes = body.len();
        }
        ms.sort_by(f64::total_cmp);
        println!("| `{label}` | {:.1} | {:.1} | {bytes} |", ms[2], ms[4]);
    };
    for path in &gets {
        time(&format!("GET {path}"), &|| client.get(path));
    }
    let ask = format!("csrf={csrf}&q=Where+does+Maya+live%3F&budget=1024&limit=10");
    time("POST /ui/ask", &|| client.post("/ui/ask", &ask));
}
