//! ARCHITECTURE.md's crate graph and layering rules, checked against every
//! `crates/*/Cargo.toml` and the crates' sources, so they cannot rot
//! silently (issue 19 item 8).
//!
//! The manifests are read as plain text: the `kith-*` and other entries of
//! each `[dependencies]` table (and `[target.….dependencies]`; not
//! dev-dependencies, which only tests build). When a rule here fails, either
//! the change is wrong, or the architecture changed on purpose: then change
//! ARCHITECTURE.md's crate graph and [`GRAPH`] together.
//!
//! Each check is a function of the repository root that returns the broken
//! rules as sentences; `checks_catch_*` run them on small broken trees, so a
//! check that stops seeing anything fails too.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// ARCHITECTURE.md's crate graph: exactly the `kith-*` entries of each
/// crate's `[dependencies]`.
const GRAPH: &[(&str, &[&str])] = &[
    ("kith-core", &[]),
    ("kith-fetch", &[]),
    ("kith-extract", &["kith-core"]),
    ("kith-identity", &["kith-core", "kith-extract"]),
    ("kith-embed", &["kith-fetch"]),
    ("kith-store", &["kith-core", "kith-fetch"]),
    (
        "kith",
        &[
            "kith-core",
            "kith-embed",
            "kith-extract",
            "kith-identity",
            "kith-store",
        ],
    ),
    ("kith-server", &["kith"]),
    ("kith-cli", &["kith", "kith-core", "kith-server"]),
];

/// Crates that never depend, directly or through others, on the store or
/// the engine: they are below both.
const BELOW_THE_STORE: &[&str] = &[
    "kith-core",
    "kith-extract",
    "kith-identity",
    "kith-embed",
    "kith-fetch",
];

/// Outside crates that only one kith crate may name in `[dependencies]`.
const OWNED: &[(&str, &[&str])] = &[
    // Terminals and the binary's error type.
    ("kith-cli", &["clap", "anyhow", "indicatif"]),
    // HTTP, the async runtime, OpenAPI and MCP.
    (
        "kith-server",
        &["axum", "tokio", "hyper", "hyper-util", "utoipa", "rmcp"],
    ),
    // The database clients.
    ("kith-store", &["rusqlite", "postgres"]),
];

/// The engine's facade: with `lib.rs` (which re-exports it), the one file
/// of `crates/kith/src` that names `Memory` in an `impl` or a `use`.
const FACADE: &str = "memory.rs";

/// The most lines a function of `crates/*/src` may span (signature to
/// closing brace, as rustfmt lays it out) without a reason in [`LONG_FNS`]:
/// past it a function holds several named steps that want their own names.
const LONGEST_FN: usize = 110;

/// Functions allowed over [`LONGEST_FN`] lines: (path under `crates/`,
/// function name or `*` for any in a path ending in `/`, why).
const LONG_FNS: &[(&str, &str, &str)] = &[(
    "kith-server/src/apidoc/responses.rs",
    "components",
    "one declarative list of every OpenAPI schema and example",
)];

/// Paths of `std` that do I/O or read the process's surroundings.
const OUTSIDE_WORLD: &[&str] = &["fs", "net", "process", "env"];

#[test]
fn crate_graph_is_the_documented_one() {
    assert_rules(check_graph(&root()));
}

#[test]
fn core_crates_never_depend_on_the_store_or_the_engine() {
    assert_rules(check_below_the_store(&root()));
}

#[test]
fn outside_crates_stay_in_their_crate() {
    assert_rules(check_owned(&root()));
}

#[test]
fn core_and_identity_never_touch_the_outside_world() {
    assert_rules(check_pure_sources(&root()));
}

#[test]
fn only_the_cli_names_clap_or_anyhow_in_code() {
    assert_rules(check_cli_only_names(&root()));
}

#[test]
fn every_source_file_says_its_job() {
    assert_rules(check_module_docs(&root()));
}

#[test]
fn only_the_facade_names_memory() {
    assert_rules(check_facade(&root()));
}

#[test]
fn no_function_runs_past_the_longest_without_a_reason() {
    assert_rules(check_fn_lengths(&root(), LONG_FNS));
}

// ---- the checks -------------------------------------------------------

/// Every crate under `crates/` is in [`GRAPH`] and the workspace, and its
/// `kith-*` dependencies are exactly the graph's.
fn check_graph(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    let crates = read_crates(root, &mut broken);
    let graph: BTreeMap<&str, BTreeSet<String>> = GRAPH
        .iter()
        .map(|(name, deps)| (*name, deps.iter().map(|d| d.to_string()).collect()))
        .collect();
    for (name, krate) in &crates {
        let Some(allowed) = graph.get(name.as_str()) else {
            broken.push(format!(
                "crate {name} ({}) is not in the crate graph; add it to ARCHITECTURE.md and to GRAPH in this test",
                krate.manifest.display()
            ));
            continue;
        };
        let actual: BTreeSet<String> = krate.kith_deps().collect();
        for extra in actual.difference(allowed) {
            broken.push(format!(
                "{name} depends on {extra}, which the crate graph does not allow ({}); \
                 remove it, or change ARCHITECTURE.md's graph and GRAPH together",
                krate.manifest.display()
            ));
        }
        for missing in allowed.difference(&actual) {
            broken.push(format!(
                "{name} no longer depends on {missing}; take the edge out of ARCHITECTURE.md's graph and GRAPH"
            ));
        }
    }
    for name in graph.keys() {
        if !crates.contains_key(*name) {
            broken.push(format!(
                "the crate graph names {name}, but crates/ has no such crate"
            ));
        }
    }
    if let Ok(text) = fs::read_to_string(root.join("Cargo.toml")) {
        let members = workspace_members(&text);
        for name in crates.keys() {
            if !members.contains(&format!("crates/{name}")) {
                broken.push(format!(
                    "crates/{name} is not a member of the workspace (Cargo.toml)"
                ));
            }
        }
    }
    broken
}

/// [`BELOW_THE_STORE`] crates reach neither kith-store nor kith, even
/// through another crate; kith-server reaches nothing of kith but through
/// the facade.
fn check_below_the_store(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    let crates = read_crates(root, &mut broken);
    for name in BELOW_THE_STORE {
        for reached in reachable(&crates, name) {
            if reached == "kith-store" || reached == "kith" {
                broken.push(format!(
                    "{name} depends on {reached} (directly or through another crate); \
                     it must stay below the store and the engine"
                ));
            }
        }
    }
    if let Some(server) = crates.get("kith-server") {
        for dep in server.kith_deps() {
            if dep != "kith" {
                broken.push(format!(
                    "kith-server depends on {dep}; it calls only the kith facade"
                ));
            }
        }
    }
    broken
}

/// Each of [`OWNED`]'s outside crates appears in no other crate's
/// `[dependencies]`.
fn check_owned(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    let crates = read_crates(root, &mut broken);
    for (owner, deps) in OWNED {
        for (name, krate) in &crates {
            if name == owner {
                continue;
            }
            for dep in *deps {
                if krate.deps.contains(*dep) {
                    broken.push(format!(
                        "{name} depends on {dep} ({}); only {owner} may",
                        krate.manifest.display()
                    ));
                }
            }
        }
    }
    broken
}

/// kith-core never uses `std::{fs, net, process, env}`; kith-identity uses
/// none of them but `env` in `options.rs`, and never reads the clock.
fn check_pure_sources(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    for file in rust_files(&root.join("crates/kith-core/src")) {
        let text = read(&file, &mut broken);
        for used in std_paths(&text) {
            if OUTSIDE_WORLD.contains(&used.as_str()) {
                broken.push(format!(
                    "{} uses std::{used}; kith-core never does I/O or reads its surroundings",
                    file.display()
                ));
            }
        }
    }
    for file in rust_files(&root.join("crates/kith-identity/src")) {
        let text = read(&file, &mut broken);
        let options = file.file_name().is_some_and(|n| n == "options.rs");
        for used in std_paths(&text) {
            let allowed = used == "env" && options;
            if OUTSIDE_WORLD.contains(&used.as_str()) && !allowed {
                broken.push(format!(
                    "{} uses std::{used}; kith-identity's rules are pure (only options.rs reads the environment)",
                    file.display()
                ));
            }
        }
        for clock in ["Timestamp::now", "now_utc", "SystemTime", "Instant::now"] {
            if text.contains(clock) {
                broken.push(format!(
                    "{} reads the clock ({clock}); kith-identity's rules take times as input",
                    file.display()
                ));
            }
        }
    }
    broken
}

/// No source of a crate but kith-cli names `anyhow::` or `clap::`.
fn check_cli_only_names(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    let crates = read_crates(root, &mut broken);
    for (name, krate) in &crates {
        if name == "kith-cli" {
            continue;
        }
        for file in rust_files(&krate.dir.join("src")) {
            let text = read(&file, &mut broken);
            for path in ["anyhow::", "clap::"] {
                if text.contains(path) {
                    broken.push(format!(
                        "{} names {path}; only kith-cli knows clap and anyhow",
                        file.display()
                    ));
                }
            }
        }
    }
    broken
}

/// Every source file opens with a `//!` doc, except generated ones
/// (`// @generated`).
fn check_module_docs(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    let crates = read_crates(root, &mut broken);
    for krate in crates.values() {
        for file in rust_files(&krate.dir.join("src")) {
            let text = read(&file, &mut broken);
            let start = text.trim_start();
            if !start.starts_with("//!") && !start.starts_with("// @generated") {
                broken.push(format!(
                    "{} does not open with a //! doc saying its job",
                    file.display()
                ));
            }
        }
    }
    broken
}

/// No file of `crates/kith/src` but [`FACADE`] and `lib.rs` names `Memory`
/// in an `impl` or a `use` outside its tests: modules take what they need, never the facade, so no
/// import runs back to it.
fn check_facade(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    let src = root.join("crates/kith/src");
    for file in rust_files(&src) {
        let relative = file.strip_prefix(&src).unwrap_or(&file);
        let relative = relative.to_string_lossy().replace('\\', "/");
        if relative == FACADE || relative == "lib.rs" {
            continue;
        }
        let text = read(&file, &mut broken);
        for item in memory_items(&text) {
            broken.push(format!(
                "{} names Memory in `{item}`; only the facade ({FACADE}) does: take a Ctx or what the function needs",
                file.display()
            ));
        }
    }
    broken
}

/// No function of a crate's non-test sources spans more than
/// [`LONGEST_FN`] lines unless `allowed` (shaped like [`LONG_FNS`]) gives
/// the reason; every entry of `allowed` still names a long function (a
/// stale reason is broken too).
fn check_fn_lengths(root: &Path, allowed: &[(&str, &str, &str)]) -> Vec<String> {
    let mut broken = Vec::new();
    let crates_dir = root.join("crates");
    let mut used = BTreeSet::new();
    for krate in read_crates(root, &mut broken).values() {
        for file in rust_files(&krate.dir.join("src")) {
            let relative = file.strip_prefix(&crates_dir).unwrap_or(&file);
            let relative = relative.to_string_lossy().replace('\\', "/");
            let text = read(&file, &mut broken);
            for (name, line, length) in functions(&text) {
                if length <= LONGEST_FN {
                    continue;
                }
                let reason = allowed.iter().position(|(path, f, _)| {
                    let file_matches =
                        relative == *path || (path.ends_with('/') && relative.starts_with(path));
                    file_matches && (*f == "*" || *f == name)
                });
                match reason {
                    Some(at) => {
                        used.insert(at);
                    }
                    None => broken.push(format!(
                        "{}:{line}: fn {name} spans {length} lines (over {LONGEST_FN}): \
                         extract its steps into named functions, or give the reason in LONG_FNS",
                        file.display()
                    )),
                }
            }
        }
    }
    for (at, (path, name, _)) in allowed.iter().enumerate() {
        if !used.contains(&at) {
            broken.push(format!(
                "LONG_FNS allows {path} {name}, which is no longer over {LONGEST_FN} lines: remove the entry"
            ));
        }
    }
    broken
}

// ---- reading the tree -------------------------------------------------

struct Crate {
    dir: PathBuf,
    manifest: PathBuf,
    /// Every entry of `[dependencies]` and `[target.….dependencies]`.
    deps: BTreeSet<String>,
}

impl Crate {
    fn kith_deps(&self) -> impl Iterator<Item = String> + '_ {
        self.deps
            .iter()
            .filter(|d| *d == "kith" || d.starts_with("kith-"))
            .cloned()
    }
}

/// The repository's root (canonical, so messages name files plainly).
fn root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The crates under `root/crates`, by package name.
fn read_crates(root: &Path, broken: &mut Vec<String>) -> BTreeMap<String, Crate> {
    let mut crates = BTreeMap::new();
    let dir = root.join("crates");
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) => {
            broken.push(format!("cannot list {}: {e}", dir.display()));
            return crates;
        }
    };
    for entry in entries.flatten() {
        let manifest = entry.path().join("Cargo.toml");
        if !manifest.is_file() {
            continue;
        }
        let text = read(&manifest, broken);
        let Some(name) = package_name(&text) else {
            broken.push(format!("{} has no [package] name", manifest.display()));
            continue;
        };
        crates.insert(
            name,
            Crate {
                dir: entry.path(),
                deps: dependencies(&text),
                manifest,
            },
        );
    }
    crates
}

/// The crates `name` depends on through `[dependencies]`, at any depth.
fn reachable(crates: &BTreeMap<String, Crate>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    while let Some(next) = todo.pop() {
        if let Some(krate) = crates.get(&next) {
            for dep in krate.kith_deps() {
                if seen.insert(dep.clone()) {
                    todo.push(dep);
                }
            }
        }
    }
    seen
}

fn read(path: &Path, broken: &mut Vec<String>) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| {
        broken.push(format!("cannot read {}: {e}", path.display()));
        String::new()
    })
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        let Ok(entries) = fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

// ---- plain-text TOML, as much as Cargo.toml files here need ------------

/// A line without its comment (a `#` outside a string).
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..i],
            _ => {}
        }
    }
    line
}

/// How much deeper in `[`/`{` the line leaves us (strings skipped).
fn depth_change(line: &str) -> i32 {
    let mut in_string = false;
    let mut depth = 0;
    for c in line.chars() {
        match c {
            '"' => in_string = !in_string,
            '[' | '{' if !in_string => depth += 1,
            ']' | '}' if !in_string => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// `(table header, key, value)` of every top-level entry, a value spanning
/// lines (a multi-line array) joined into one.
fn entries(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut table = String::new();
    let mut open: Option<(String, String, i32)> = None;
    for raw in text.lines() {
        let line = strip_comment(raw).trim();
        if let Some((key, mut value, depth)) = open.take() {
            value.push(' ');
            value.push_str(line);
            let depth = depth + depth_change(line);
            if depth > 0 {
                open = Some((key, value, depth));
            } else {
                out.push((table.clone(), key, value));
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            table = line.trim_matches(['[', ']']).trim().to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().to_string(), value.trim().to_string());
        let depth = depth_change(&value);
        if depth > 0 {
            open = Some((key, value, depth));
        } else {
            out.push((table.clone(), key, value));
        }
    }
    out
}

fn unquote(s: &str) -> &str {
    s.trim().trim_matches('"')
}

fn package_name(text: &str) -> Option<String> {
    entries(text)
        .into_iter()
        .find(|(table, key, _)| table == "package" && key == "name")
        .map(|(_, _, value)| unquote(&value).to_string())
}

/// Whether `table` is a table of normal dependencies: `dependencies`,
/// `target.<cfg>.dependencies`, or one dependency's own table
/// (`dependencies.<name>`), whose name it returns as `Some(Some(name))`.
fn dependency_table(table: &str) -> Option<Option<String>> {
    let rest = match table.strip_prefix("target.") {
        Some(rest) => rest.rsplit_once(".dependencies").map(|(_, r)| r)?,
        None => table.strip_prefix("dependencies")?,
    };
    if rest.is_empty() {
        Some(None)
    } else {
        rest.strip_prefix('.')
            .map(|name| Some(unquote(name).to_string()))
    }
}

/// The package names in the manifest's normal dependency tables (a
/// `package = "…"` rename gives the real name).
fn dependencies(text: &str) -> BTreeSet<String> {
    let mut deps = BTreeSet::new();
    // A dependency's own table: its name, and its `package` if renamed.
    let mut own_tables: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (table, key, value) in entries(text) {
        match dependency_table(&table) {
            Some(None) => {
                let name = unquote(key.split('.').next().unwrap_or(&key)).to_string();
                deps.insert(renamed(&value).unwrap_or(name));
            }
            Some(Some(name)) => {
                let package = own_tables.entry(name).or_default();
                if key == "package" {
                    *package = Some(unquote(&value).to_string());
                }
            }
            None => {}
        }
    }
    for (name, package) in own_tables {
        deps.insert(package.unwrap_or(name));
    }
    deps
}

/// The `package = "…"` of an inline dependency table.
fn renamed(value: &str) -> Option<String> {
    let at = value.find("package")?;
    let rest = value[at + "package".len()..]
        .trim_start()
        .strip_prefix('=')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    Some(rest.split('"').next()?.to_string())
}

/// The `members` of the root manifest's `[workspace]`.
fn workspace_members(text: &str) -> BTreeSet<String> {
    entries(text)
        .into_iter()
        .filter(|(table, key, _)| table == "workspace" && key == "members")
        .flat_map(|(_, _, value)| {
            value
                .trim_matches(['[', ']'])
                .split(',')
                .map(|m| unquote(m).to_string())
                .filter(|m| !m.is_empty())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The names right after `std::` (`std::fs::File` gives `fs`; `use
/// std::{env, fs::File}` gives `env` and `fs`).
fn std_paths(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("std::") {
        let rest = &text[at + "std::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            for item in group.split(',') {
                let head: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    found.insert(head);
                }
            }
        } else {
            let head: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.insert(head);
        }
    }
    found
}

/// The `use` and `impl` items of `text`'s non-test code (before its first
/// `#[cfg(test)]`) that name `Memory`, each joined on one line: a `use`
/// whole, an `impl` up to its `{`.
fn memory_items(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = Vec::new();
    // The item being read: whether it is a `use`, and its text so far.
    let mut item: Option<(bool, String)> = None;
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        let (is_use, mut joined) = match item.take() {
            Some(open) => open,
            None if starts_item(line, "use") => (true, String::new()),
            None if starts_item(line, "impl") => (false, String::new()),
            None => continue,
        };
        let end = if is_use {
            line.find(';')
        } else {
            line.find('{')
        };
        joined.push_str(&line[..end.unwrap_or(line.len())]);
        joined.push(' ');
        if end.is_none() {
            item = Some((is_use, joined));
        } else if names_word(&joined, "Memory") {
            found.push(joined.trim().to_string());
        }
    }
    found
}

/// The functions with a body in `text`'s non-test code (before its first
/// `#[cfg(test)]`), as (name, first line, lines spanned), measured on
/// rustfmt's layout: from the `fn` line to the first later line that is
/// the `}` at the `fn`'s indentation.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else {
            continue;
        };
        // The signature ends at the line that opens the body, or at the
        // `;` of a declaration without one.
        let Some(open) = lines[i..].iter().position(|l| {
            let l = l.split("//").next().unwrap_or("").trim_end();
            l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
        }) else {
            continue;
        };
        let opening = lines[i + open].split("//").next().unwrap_or("").trim_end();
        if !opening.ends_with('{') {
            // A declaration, or a body on one line.
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + open + 1..].iter().position(|l| *l == close) {
            found.push((name, i + 1, open + end + 2));
        }
    }
    found
}

/// The name of the function `line` declares (after `pub`, `const`,
/// `async`, `unsafe`, `extern "C"`), if it declares one.
fn fn_name(line: &str) -> Option<String> {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        rest = match r.strip_prefix('(') {
            Some(r) => r.split_once(')')?.1,
            None => r,
        }
        .trim_start();
    }
    for qualifier in ["const ", "async ", "unsafe ", "extern \"C\" "] {
        if let Some(r) = rest.strip_prefix(qualifier) {
            rest = r.trim_start();
        }
    }
    let name: String = rest
        .strip_prefix("fn ")?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let starts_well = name.starts_with(|c: char| c.is_alphabetic() || c == '_');
    starts_well.then_some(name)
}

/// True when `line` starts the item `keyword` (after `pub`, `pub(crate)`…).
fn starts_item(line: &str, keyword: &str) -> bool {
    let rest = match line.strip_prefix("pub") {
        Some(rest) => rest
            .trim_start()
            .strip_prefix('(')
            .and_then(|r| r.split_once(')'))
            .map_or(rest, |(_, r)| r),
        None => line,
    };
    let rest = rest.trim_start();
    rest.strip_prefix(keyword)
        .is_some_and(|r| r.starts_with([' ', '<', '{']))
}

/// True when `text` has `word` as a whole identifier.
fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

fn assert_rules(broken: Vec<String>) {
    assert!(
        broken.is_empty(),
        "architecture rules broken (ARCHITECTURE.md, \"Invariants\"):\n- {}",
        broken.join("\n- ")
    );
}

// ---- the checks catch what they are for --------------------------------

/// A tree shaped like the repository: the root manifest and one
/// `crates/<name>` per entry of [`GRAPH`], each with the graph's
/// dependencies and a documented `src/lib.rs`.
fn good_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let members: Vec<String> = GRAPH
        .iter()
        .map(|(name, _)| format!("    \"crates/{name}\","))
        .collect();
    write(
        &dir.path().join("Cargo.toml"),
        &format!(
            "[workspace]\nresolver = \"2\"\nmembers = [\n{}\n]\n",
            members.join("\n")
        ),
    );
    for (name, deps) in GRAPH {
        let mut manifest = format!("[package]\nname = \"{name}\"\n\n[dependencies]\n");
        for dep in *deps {
            manifest.push_str(&format!("{dep}.workspace = true\n"));
        }
        for (owner, owned) in OWNED {
            if owner == name {
                manifest.push_str(&format!("{} = \"1\"\n", owned[0]));
            }
        }
        // What the real manifests hold too: comments naming crates,
        // dev-dependencies that are allowed anywhere.
        manifest.push_str("# tokio and axum are not dependencies here\n");
        manifest.push_str("\n[dev-dependencies]\nanyhow = \"1\"\nkith-store = { workspace = true, features = [\n    \"pg-testing\",\n] }\n");
        let krate = dir.path().join("crates").join(name);
        write(&krate.join("Cargo.toml"), &manifest);
        write(
            &krate.join("src/lib.rs"),
            "//! A crate.\n\nuse std::collections::BTreeMap;\n",
        );
    }
    dir
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a parent")).expect("create a directory");
    fs::write(path, text).expect("write a file");
}

fn append(path: &Path, text: &str) {
    let mut old = fs::read_to_string(path).expect("read a file");
    old.push_str(text);
    fs::write(path, old).expect("write a file");
}

/// Inserts `line` right after the `[dependencies]` header of `krate`.
fn add_dependency(root: &Path, krate: &str, line: &str) {
    let path = root.join("crates").join(krate).join("Cargo.toml");
    let text = fs::read_to_string(&path).expect("read a manifest");
    let text = text.replacen("[dependencies]\n", &format!("[dependencies]\n{line}\n"), 1);
    fs::write(&path, text).expect("write a manifest");
}

#[test]
fn checks_pass_on_a_tree_that_keeps_the_rules() {
    let tree = good_tree();
    for check in [
        check_graph,
        check_below_the_store,
        check_owned,
        check_pure_sources,
        check_cli_only_names,
        check_module_docs,
        check_facade,
    ] {
        assert_eq!(check(tree.path()), Vec::<String>::new());
    }
    assert_eq!(check_fn_lengths(tree.path(), &[]), Vec::<String>::new());
}

#[test]
fn checks_catch_a_dependency_outside_the_graph() {
    let tree = good_tree();
    // What a server that reads the store directly would add.
    add_dependency(tree.path(), "kith-server", "kith-store.workspace = true");
    let broken = check_graph(tree.path());
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with("kith-server depends on kith-store")),
        "{broken:?}"
    );
    assert!(!check_below_the_store(tree.path()).is_empty());
}

#[test]
fn checks_catch_a_core_crate_that_reaches_the_store() {
    let tree = good_tree();
    // Through a target table and another crate: kith-fetch → kith.
    append(
        &tree.path().join("crates/kith-fetch/Cargo.toml"),
        "\n[target.'cfg(unix)'.dependencies]\nkith = { path = \"../kith\" }\n",
    );
    let broken = check_below_the_store(tree.path());
    // kith-embed reaches the engine through kith-fetch.
    for name in ["kith-fetch", "kith-embed"] {
        let reaches = |b: &String| b.starts_with(&format!("{name} depends on kith "));
        assert!(broken.iter().any(reaches), "{name}: {broken:?}");
    }
    assert!(!check_graph(tree.path()).is_empty());
}

#[test]
fn checks_catch_an_owned_crate_elsewhere_and_a_rename() {
    let tree = good_tree();
    add_dependency(
        tree.path(),
        "kith",
        "errors = { package = \"anyhow\", version = \"1\" }",
    );
    add_dependency(tree.path(), "kith-core", "rusqlite.workspace = true");
    let broken = check_owned(tree.path());
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with("kith depends on anyhow")),
        "{broken:?}"
    );
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with("kith-core depends on rusqlite")),
        "{broken:?}"
    );
}

#[test]
fn checks_catch_io_in_pure_crates_and_cli_names_elsewhere() {
    let tree = good_tree();
    let core = tree.path().join("crates/kith-core/src/lib.rs");
    append(&core, "use std::{collections::BTreeSet, env};\n");
    let identity = tree.path().join("crates/kith-identity/src/rules.rs");
    write(
        &identity,
        "//! Rules.\nfn f() { let _ = std::fs::read(\"x\"); let _ = Timestamp::now(); }\n",
    );
    let options = tree.path().join("crates/kith-identity/src/options.rs");
    write(
        &options,
        "//! Options.\nfn f() { let _ = std::env::var(\"X\"); }\n",
    );
    let broken = check_pure_sources(tree.path());
    assert_eq!(broken.len(), 3, "{broken:?}");
    assert!(
        broken.iter().any(|b| b.contains("lib.rs uses std::env")),
        "{broken:?}"
    );
    assert!(
        broken.iter().any(|b| b.contains("rules.rs uses std::fs")),
        "{broken:?}"
    );
    assert!(
        broken
            .iter()
            .any(|b| b.contains("rules.rs reads the clock")),
        "{broken:?}"
    );

    append(
        &tree.path().join("crates/kith/src/lib.rs"),
        "fn f() -> anyhow::Result<()> { Ok(()) }\n",
    );
    append(
        &tree.path().join("crates/kith-cli/src/lib.rs"),
        "fn f() -> anyhow::Result<()> { Ok(()) }\n",
    );
    let broken = check_cli_only_names(tree.path());
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(
        broken[0].contains("kith/src/lib.rs names anyhow::"),
        "{broken:?}"
    );
}

#[test]
fn checks_catch_an_undocumented_file_and_an_unknown_crate() {
    let tree = good_tree();
    write(
        &tree.path().join("crates/kith-store/src/helpers.rs"),
        "pub fn f() {}\n",
    );
    write(
        &tree.path().join("crates/kith-store/src/tables.rs"),
        "// @generated by a tool\npub const T: u8 = 0;\n",
    );
    let broken = check_module_docs(tree.path());
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(
        broken[0].contains("helpers.rs does not open with a //! doc"),
        "{broken:?}"
    );

    write(
        &tree.path().join("crates/kith-console/Cargo.toml"),
        "[package]\nname = \"kith-console\"\n\n[dependencies]\nkith.workspace = true\n",
    );
    let broken = check_graph(tree.path());
    assert!(
        broken.iter().any(|b| b.starts_with("crate kith-console")),
        "{broken:?}"
    );
    assert!(
        broken
            .iter()
            .any(|b| b.contains("crates/kith-console is not a member")),
        "{broken:?}"
    );
}

#[test]
fn checks_catch_an_engine_module_that_names_the_facade() {
    let tree = good_tree();
    let src = tree.path().join("crates/kith/src");
    // The facade and the crate root may.
    write(
        &src.join("memory.rs"),
        "//! The facade.\npub struct Memory;\nimpl Memory {}\n",
    );
    append(&src.join("lib.rs"), "pub use memory::Memory;\n");
    // Tests may drive the facade; doc comments and other names may say it.
    write(
        &src.join("search.rs"),
        "//! Search, see [`crate::Memory`].\nuse crate::context::Ctx;\n\
         struct MemoryUse;\nimpl MemoryUse {}\n\
         #[cfg(test)]\nmod tests {\n    use crate::Memory;\n}\n",
    );
    assert_eq!(check_facade(tree.path()), Vec::<String>::new());

    write(
        &src.join("claims.rs"),
        "//! Claims.\nuse crate::{\n    error::Error,\n    memory::Memory,\n};\n",
    );
    write(
        &src.join("organize/undo.rs"),
        "//! Undo.\npub(crate) use crate::Memory as M;\n",
    );
    write(
        &src.join("embedding.rs"),
        "//! Embedding.\nuse crate::memory::Memory;\nimpl Memory {}\n",
    );
    write(
        &src.join("doctor.rs"),
        "//! Doctor.\nimpl std::fmt::Debug for Memory {\n}\nimpl<'a> Check\n    for &'a Memory\n{\n}\n",
    );
    let broken = check_facade(tree.path());
    assert_eq!(broken.len(), 6, "{broken:?}");
    for (file, item) in [
        ("claims.rs", "memory::Memory"),
        ("embedding.rs", "crate::memory::Memory"),
        ("embedding.rs", "impl Memory"),
        ("undo.rs", "crate::Memory as M"),
        ("doctor.rs", "Debug for Memory"),
        ("doctor.rs", "&'a Memory"),
    ] {
        assert!(
            broken.iter().any(|b| b.contains(file) && b.contains(item)),
            "{file}: {broken:?}"
        );
    }
}

#[test]
fn checks_catch_a_long_function_and_a_stale_reason() {
    let tree = good_tree();
    // `lines` lines from `fn` to its closing brace, at `indent`.
    let function = |indent: &str, head: &str, lines: usize| -> String {
        let mut text = format!("{indent}{head} {{\n");
        for _ in 0..lines - 2 {
            text.push_str(&format!("{indent}    step();\n"));
        }
        text.push_str(&format!("{indent}}}\n"));
        text
    };
    let mut code = String::from("//! Steps.\n");
    code.push_str(&function("", "pub(crate) fn at_the_limit()", LONGEST_FN));
    code.push_str(&function("", "async fn one_too_many()", LONGEST_FN + 1));
    // A declaration, then a long method: measured from its own line.
    code.push_str("trait Steps {\n    fn declared(\n        &self,\n    ) -> u8;\n");
    code.push_str(&function("    ", "fn method(&self)", LONGEST_FN + 2));
    code.push_str("}\n");
    code.push_str(&function(
        "",
        "pub fn signed(\n    a: u8,\n) -> u8\nwhere\n    u8: Copy,",
        LONGEST_FN - 3,
    ));
    code.push_str("#[cfg(test)]\nmod tests {\n");
    code.push_str(&function("    ", "fn a_long_test()", LONGEST_FN + 10));
    code.push_str("}\n");
    write(&tree.path().join("crates/kith-store/src/steps.rs"), &code);

    let broken = check_fn_lengths(tree.path(), &[]);
    assert_eq!(broken.len(), 3, "{broken:?}");
    for (name, lines) in [
        ("one_too_many", LONGEST_FN + 1),
        ("method", LONGEST_FN + 2),
        // The signature's lines count.
        ("signed", LONGEST_FN + 1),
    ] {
        let says = format!("fn {name} spans {lines} lines");
        assert!(
            broken.iter().any(|b| b.contains(&says)),
            "{name}: {broken:?}"
        );
    }

    let allowed = [
        ("kith-store/src/steps.rs", "one_too_many", "a reason"),
        ("kith-store/src/", "*", "a reason for the folder"),
        ("kith-store/src/steps.rs", "at_the_limit", "not long"),
    ];
    let broken = check_fn_lengths(tree.path(), &allowed);
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(
        broken[0].contains("allows kith-store/src/steps.rs at_the_limit"),
        "{broken:?}"
    );
}
