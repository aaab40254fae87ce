//! Every import points down: the module table of `docs/architecture.md` against what `src/`
//! names.
//!
//! For every module of the library (`src/<module>/` or `src/<module>.rs`), every path written
//! from the crate root (`crate::other::…`, a `use crate::{a, b}` group, a `pub use`, a doc link;
//! a name re-exported at the root, `crate::Hub`, counts as its module) must name a module listed
//! in that module's "uses" cell, and every module listed there must sit above it in the table: the
//! drawing has no arrow back up, so no cycle either. No exception: a re-export is a use too.
//! Hermetic: reads files only.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One row of the module table: the modules it names and the modules they may use.
#[derive(Debug)]
struct Row {
    modules: Vec<String>,
    uses: BTreeSet<String>,
}

/// A path from the crate root found in a source file.
#[derive(Debug)]
struct CrateUse {
    file: PathBuf,
    line: usize,
    module: String,
    /// Written in code (not a comment) through a name the crate root re-exports (`crate::State`):
    /// code names the module (`crate::state::State`), so that nothing imports through the root,
    /// which uses every module. Doc links may name the root: it is the name's one public path.
    through_root: bool,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The backticked words of a table cell that are plain identifiers (`plan`, not
/// `mcp_readiness_cli::sim` or `src/commands/`).
fn identifiers(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_owned)
        .collect()
}

/// The rows of the table under the section `## {title}` whose header is
/// `| {first} | holds | uses | feature |`, top to bottom; rows naming no module of this package
/// (the command line's) are left out.
fn module_table(doc: &str, title: &str, first: &str) -> Vec<Row> {
    let section = doc
        .split("\n## ")
        .find(|section| section.starts_with(title))
        .unwrap_or_else(|| panic!("docs/architecture.md has a section `## {title}`"));
    let mut lines = section.lines().skip_while(|line| !line.starts_with('|'));
    let header: Vec<&str> = lines
        .next()
        .expect("the section has a table")
        .split('|')
        .map(str::trim)
        .collect();
    assert_eq!(
        header,
        ["", first, "holds", "uses", "feature", ""],
        "the table's columns are | {first} | holds | uses | feature |"
    );
    let mut rows = Vec::new();
    for line in lines {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.get(1).is_some_and(|cell| cell.starts_with("---")) {
            continue;
        }
        assert_eq!(cells.len(), 6, "a module table row has four cells: {line}");
        let modules = identifiers(cells[1]);
        if modules.is_empty() {
            continue;
        }
        rows.push(Row {
            modules,
            uses: identifiers(cells[3]).into_iter().collect(),
        });
    }
    rows
}

/// The modules of a folder: its sub-folders and files but `lib.rs` / `mod.rs` (for `src/`, the
/// library's top-level modules; for `src/client/`, the client's rooms and the files at its door).
fn source_modules(src: &Path) -> BTreeSet<String> {
    fs::read_dir(src)
        .expect("the source folder is readable")
        .map(|entry| entry.expect("src/ is readable").path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.to_owned();
            if path.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib" && stem != "mod").then(|| stem.to_owned())
            }
        })
        .collect()
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("src/ is readable").path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            into.push(path);
        }
    }
}

/// The names the crate root re-exports (`pub use supervise::{Hub, …}` in `lib.rs`), each with
/// the module it comes from: `crate::Hub` is a use of `supervise`.
fn root_reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let path = &statement[at + "pub use ".len()..];
        let Some((module, leaves)) = path.split_once("::") else {
            continue;
        };
        let module = module.trim();
        if !modules.contains(module) {
            continue;
        }
        for leaf in leaves.split([',', '{', '}', ' ', '\n']) {
            let leaf = leaf.rsplit("::").next().unwrap_or_default().trim();
            if leaf.chars().next().is_some_and(char::is_alphabetic) {
                names.insert(leaf.to_owned(), module.to_owned());
            }
        }
    }
    names
}

/// The first identifier of `text` (after blanks).
fn identifier(text: &str) -> &str {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first segments of the top-level items of the group that starts at `text[0] == '{'`.
fn group_heads(text: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item_start = 1;
    for (i, c) in text.char_indices() {
        match c {
            '{' => {
                depth += 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    heads.push(identifier(&text[item_start..i]));
                    break;
                }
            }
            ',' if depth == 1 => {
                heads.push(identifier(&text[item_start..i]));
                item_start = i + 1;
            }
            _ => {}
        }
    }
    heads
}

/// Every path from `prefix` (`crate::`, or `crate::client::` for the client's rooms) in `text`
/// that names one of `modules` (directly or through a root re-export), with its line.
fn crate_uses(
    file: &Path,
    text: &str,
    prefix: &str,
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> Vec<CrateUse> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices(prefix) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let after = text[at + prefix.len()..].trim_start();
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let in_comment = text[line_start..at].trim_start().starts_with("//");
        let heads = if after.starts_with('{') {
            group_heads(after)
        } else {
            vec![identifier(after)]
        };
        let line = text[..at].matches('\n').count() + 1;
        for head in heads {
            let (module, through_root) = if modules.contains(head) {
                (head, false)
            } else if let Some(module) = reexports.get(head) {
                (module.as_str(), !in_comment)
            } else {
                continue;
            };
            found.push(CrateUse {
                file: file.to_owned(),
                line,
                module: module.to_owned(),
                through_root,
            });
        }
    }
    found
}

/// Whether `uses` (module -> modules it may use) has a cycle, and one if so.
fn cycle(uses: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in uses.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, uses, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    uses.keys()
        .find_map(|node| visit(node, uses, &mut Vec::new(), &mut done))
}

/// What is wrong with the drawing of one folder's rooms: the table under `## {title}` against the
/// folder `src_dir`, whose files name each other from `prefix`.
fn drawing_problems(
    doc: &str,
    (title, first): (&str, &str),
    src_dir: &Path,
    prefix: &str,
    reexports: &BTreeMap<String, String>,
) -> Vec<String> {
    let rows = module_table(doc, title, first);
    let modules = source_modules(src_dir);
    let folder = src_dir.strip_prefix(root()).unwrap_or(src_dir).display();
    let mut problems = Vec::new();

    // The table and the folder name the same modules; a module's level is its row.
    let mut level = BTreeMap::new();
    let mut uses = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        for module in &row.modules {
            if !modules.contains(module) {
                problems.push(format!(
                    "docs/architecture.md ({title}) lists `{module}`, which is not in {folder}/"
                ));
            }
            level.insert(module.clone(), i);
            uses.insert(module.clone(), row.uses.clone());
        }
    }
    for module in &modules {
        if !level.contains_key(module) {
            problems.push(format!(
                "{folder}/{module} is not in the table `{title}` of docs/architecture.md"
            ));
        }
    }

    // The drawing: every module a row uses is listed, and above it.
    for (module, used) in &uses {
        for other in used {
            match level.get(other) {
                None => problems.push(format!(
                    "docs/architecture.md: `{module}` uses `{other}`, which is not in the table"
                )),
                Some(&above) if above >= level[module] => problems.push(format!(
                    "docs/architecture.md: `{module}` uses `{other}`, which is not above it in the table (an arrow back up)"
                )),
                Some(_) => {}
            }
        }
    }
    if let Some(cycle) = cycle(&uses) {
        problems.push(format!(
            "docs/architecture.md: the uses form a cycle: {}",
            cycle.join(" -> ")
        ));
    }

    // The code: every path from the prefix names a module the table lets it use.
    for module in &modules {
        let mut files = Vec::new();
        rust_files(&src_dir.join(module), &mut files);
        let single = src_dir.join(format!("{module}.rs"));
        if single.is_file() {
            files.push(single);
        }
        files.sort();
        let allowed = uses.get(module).cloned().unwrap_or_default();
        for file in files {
            let text = fs::read_to_string(&file).expect("a source file is readable");
            for found in crate_uses(&file, &text, prefix, &modules, reexports) {
                let shown = found
                    .file
                    .strip_prefix(root())
                    .unwrap_or(&found.file)
                    .display();
                if found.through_root {
                    problems.push(format!(
                        "{shown}:{}: imports `{}` through the crate root (name the module: the root uses every module)",
                        found.line, found.module
                    ));
                }
                if found.module == *module || allowed.contains(&found.module) {
                    continue;
                }
                problems.push(format!(
                    "{shown}:{}: `{module}` uses `{}`, which its row of docs/architecture.md does not list",
                    found.line, found.module
                ));
            }
        }
    }
    problems
}

#[test]
fn every_import_points_down_the_module_table_of_docs_architecture() {
    let doc = fs::read_to_string(root().join("docs/architecture.md"))
        .expect("docs/architecture.md is readable");
    let src = root().join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs is readable");
    let reexports = root_reexports(&lib, &source_modules(&src));
    let problems = drawing_problems(
        &doc,
        ("The modules of the library", "module"),
        &src,
        "crate::",
        &reexports,
    );
    assert!(
        problems.is_empty(),
        "imports that do not point down the module table:\n{}",
        problems.join("\n")
    );
}

/// The client's wing, drawn the same way: its rooms and the files at its door, every import
/// between them pointing down, no circle (its `mod.rs`, the door's re-exports, is not a room).
#[test]
fn every_import_in_the_client_points_down_its_rooms() {
    let doc = fs::read_to_string(root().join("docs/architecture.md"))
        .expect("docs/architecture.md is readable");
    let problems = drawing_problems(
        &doc,
        ("The rooms of the client", "room"),
        &root().join("src/client"),
        "crate::client::",
        &BTreeMap::new(),
    );
    assert!(
        problems.is_empty(),
        "imports that do not point down the client's rooms:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_scanner_sees_groups_nested_paths_and_root_reexports() {
    let modules: BTreeSet<String> = ["state", "layer", "supervise", "metrics"]
        .map(String::from)
        .into();
    let reexports = root_reexports(
        "pub use supervise::{Hub, HubOptions};\npub use rmcp;\npub use state::{Action, ToolCall};",
        &modules,
    );
    assert_eq!(reexports["Hub"], "supervise");
    assert!(!reexports.contains_key("rmcp"));
    let text = "use crate::{\n    layer::{NotReady, CallFailure},\n    state::State,\n};\n\
                /// the [`Hub`](crate::Hub)\n\
                let x = my_crate::metrics::thing;\n\
                #[cfg(feature = \"hub\")]\npub use crate::metrics::push;\n\
                let a = crate::Action::Reauthorize;\n";
    let found = crate_uses(Path::new("x.rs"), text, "crate::", &modules, &reexports);
    let seen: Vec<(usize, &str)> = found.iter().map(|f| (f.line, f.module.as_str())).collect();
    assert_eq!(
        seen,
        [
            (1, "layer"),
            (1, "state"),
            (5, "supervise"),
            (8, "metrics"),
            (9, "state")
        ]
    );
    // Only code names a module through the root; a doc link may (the root is the public path).
    let through_root: Vec<usize> = found
        .iter()
        .filter(|f| f.through_root)
        .map(|f| f.line)
        .collect();
    assert_eq!(through_root, [9]);
    let uses: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), ["b".to_owned()].into()),
        ("b".to_owned(), ["a".to_owned()].into()),
    ]
    .into();
    assert_eq!(cycle(&uses).map(|c| c.len()), Some(3));
}
