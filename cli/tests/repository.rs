//! What README.md and docs/ say about the manifests, checked against the manifests: the library's
//! features (docs/features.md's table, and which are default), the dependencies that the packages
//! share (written once, in the root `Cargo.toml`'s `[workspace.dependencies]`), and the MSRV and
//! edition. Hermetic: it reads the repository's files, nothing else. Not in the published package
//! (cli/Cargo.toml's `exclude`): it needs the repository around it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is in the repository")
        .to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One `key = value` of a manifest, with the table it is in (`dependencies`,
/// `target.'cfg(unix)'.dependencies`, `workspace.dependencies`, `features`...).
#[derive(Debug)]
struct Entry {
    table: String,
    key: String,
    value: String,
}

/// The entries of a manifest as this workspace writes them: one per line, or an array over several
/// lines; whole-line comments.
fn entries(manifest: &str) -> Vec<Entry> {
    let mut entries = Vec::<Entry>::new();
    let mut table = String::new();
    let mut open = 0i32; // brackets still open in the last entry's value
    for line in manifest.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if open > 0 {
            let last = entries.last_mut().expect("an entry is open");
            last.value.push(' ');
            last.value.push_str(line);
        } else if let Some(name) = line.strip_prefix('[') {
            table = name
                .trim_end_matches(']')
                .trim_start_matches('[')
                .to_owned();
            continue;
        } else {
            let (key, value) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("not `key = value`: {line}"));
            entries.push(Entry {
                table: table.clone(),
                key: key.trim().trim_matches('"').to_owned(),
                value: value.trim().to_owned(),
            });
        }
        open += line.matches(['[', '{']).count() as i32 - line.matches([']', '}']).count() as i32;
    }
    entries
}

/// The strings of a TOML array of strings: `["a", "b"]`.
fn strings(array: &str) -> Vec<String> {
    array
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Every package's manifest: the root's (the library's and the workspace's) and each member's.
fn manifests() -> BTreeMap<String, Vec<Entry>> {
    let root = entries(&read("Cargo.toml"));
    let members = root
        .iter()
        .find(|e| e.table == "workspace" && e.key == "members")
        .map(|e| strings(&e.value))
        .expect("the root manifest lists the workspace's members");
    let mut manifests = BTreeMap::from([(".".to_owned(), root)]);
    for member in members {
        let manifest = entries(&read(&format!("{member}/Cargo.toml")));
        manifests.insert(member, manifest);
    }
    manifests
}

fn is_dependency_table(table: &str) -> bool {
    table.ends_with("dependencies") && table != "workspace.dependencies"
}

/// README.md and docs/features.md say that the dependencies the packages share are written once in
/// the root manifest, and that the OpenTelemetry family moves together there: every dependency of
/// two or more packages (and every one of that family) is in `[workspace.dependencies]`, each
/// package takes it from there (`workspace = true`, no version, path or source of its own), and
/// the entry there names no feature (each package names the features it uses).
#[test]
fn shared_dependencies_are_written_once_in_the_root_manifest() {
    for page in ["README.md", "docs/features.md"] {
        assert!(
            read(page).contains("`[workspace.dependencies]`"),
            "{page} no longer says where shared dependencies are written"
        );
    }
    let manifests = manifests();
    let shared: BTreeMap<&str, &str> = manifests["."]
        .iter()
        .filter(|e| e.table == "workspace.dependencies")
        .map(|e| (e.key.as_str(), e.value.as_str()))
        .collect();
    let mut users = BTreeMap::<&str, BTreeSet<&str>>::new();
    for (package, manifest) in &manifests {
        for dependency in manifest.iter().filter(|e| is_dependency_table(&e.table)) {
            users
                .entry(dependency.key.as_str())
                .or_default()
                .insert(package.as_str());
            if shared.contains_key(dependency.key.as_str()) {
                let value = &dependency.value;
                assert!(
                    value.contains("workspace = true")
                        && !["version", "path", "git", "registry"]
                            .iter()
                            .any(|key| value.contains(&format!("{key} ="))),
                    "{package}/Cargo.toml [{}] writes {} = {value} instead of taking it from \
                     [workspace.dependencies]",
                    dependency.table,
                    dependency.key,
                );
            }
        }
    }
    for (dependency, packages) in &users {
        let family =
            dependency.starts_with("opentelemetry") || dependency.contains("-opentelemetry");
        assert!(
            shared.contains_key(dependency) || (packages.len() < 2 && !family),
            "{dependency} is used by {packages:?}: its version belongs in [workspace.dependencies]"
        );
    }
    for (dependency, value) in &shared {
        assert!(
            !value
                .replace("default-features =", "")
                .contains("features ="),
            "[workspace.dependencies] {dependency} names features: each package names its own"
        );
    }
}

/// The backquoted names between `from` and `to` in `text`, split at the first `;` after `from`.
fn named_between<'a>(
    text: &'a str,
    from: &str,
    to: &str,
    page: &str,
) -> (Vec<&'a str>, Vec<&'a str>) {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{page} has no `{from}`"))
        + from.len();
    let end = start
        + text[start..]
            .find(to)
            .unwrap_or_else(|| panic!("{page}: no `{to}` after `{from}`"));
    let (first, second) = text[start..end]
        .split_once(';')
        .unwrap_or_else(|| panic!("{page}: no `;` between `{from}` and `{to}`"));
    // Feature names only: `Peers`, `.mcp.json` or `/metrics` in the same sentence are not.
    let names = |part: &'a str| {
        part.split('`')
            .skip(1)
            .step_by(2)
            .filter(|name| {
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            })
            .collect::<Vec<_>>()
    };
    (names(first), names(second))
}

/// docs/features.md's table has one row per feature of the library and says `yes` for exactly the
/// default ones; README.md and docs/features.md name the default and the
/// opt-in features as the manifest has them.
#[test]
fn the_features_the_docs_list_are_the_manifests() {
    let manifest = entries(&read("Cargo.toml"));
    let features: Vec<&Entry> = manifest.iter().filter(|e| e.table == "features").collect();
    let default: BTreeSet<String> = strings(
        &features
            .iter()
            .find(|e| e.key == "default")
            .expect("the library has default features")
            .value,
    )
    .into_iter()
    .collect();
    let named: Vec<&str> = features
        .iter()
        .map(|e| e.key.as_str())
        .filter(|name| *name != "default")
        .collect();

    let page = read("docs/features.md");
    let rows: Vec<(&str, &str)> = page
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .map(|row| {
            let (name, rest) = row.split_once("` | ").expect("| `feature` | default | ...");
            (name, rest.split(" |").next().unwrap_or_default())
        })
        .collect();
    let mut listed = rows.iter().map(|(name, _)| *name).collect::<Vec<_>>();
    listed.sort_unstable();
    let mut expected = named.clone();
    expected.sort_unstable();
    assert_eq!(
        listed, expected,
        "docs/features.md's table lists other features than Cargo.toml's [features] (or one twice)"
    );
    for (name, is_default) in rows {
        assert_eq!(
            is_default == "yes",
            default.contains(name),
            "docs/features.md says `{name}` is default: {is_default}; Cargo.toml's default = {default:?}"
        );
    }

    for (page, text) in [("README.md", read("README.md")), ("docs/features.md", page)] {
        let text = text.replace('\n', " ");
        let (defaults, opt_in) = named_between(
            &text,
            "The default features are what a service needs:",
            "are opt-in",
            page,
        );
        assert_eq!(
            defaults.iter().copied().collect::<BTreeSet<_>>(),
            default.iter().map(String::as_str).collect(),
            "{page}'s default features"
        );
        let all = defaults
            .iter()
            .chain(&opt_in)
            .copied()
            .collect::<BTreeSet<_>>();
        assert_eq!(
            all,
            named.iter().copied().collect(),
            "{page} names other features than Cargo.toml's [features]"
        );
    }
}

/// "MSRV: Rust X (edition Y)" and "The MSRV (X)", wherever the docs say it, are the workspace's
/// `rust-version` and `edition`.
#[test]
fn the_msrv_the_docs_state_is_the_manifests() {
    let manifest = entries(&read("Cargo.toml"));
    let package = |key: &str| {
        let value = &manifest
            .iter()
            .find(|e| e.table == "workspace.package" && e.key == key)
            .unwrap_or_else(|| panic!("[workspace.package] has no {key}"))
            .value;
        value.trim_matches('"').to_owned()
    };
    let (msrv, edition) = (package("rust-version"), package("edition"));
    let mut pages = vec!["README.md".to_owned()];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    let mut stated = 0;
    for page in pages {
        let text = read(&page).replace('\n', " ");
        for said in text.split("MSRV: Rust ").skip(1) {
            let expected = format!("{msrv} (edition {edition})");
            assert!(
                said.starts_with(&expected),
                "{page} says `MSRV: Rust {}`; Cargo.toml: {expected}",
                &said[..said.len().min(24)]
            );
            stated += 1;
        }
        for said in text.split("The MSRV (").skip(1) {
            assert!(
                said.starts_with(&format!("{msrv})")),
                "{page} says `The MSRV ({}`; Cargo.toml: {msrv}",
                &said[..said.len().min(8)]
            );
            stated += 1;
        }
    }
    assert!(stated >= 2, "the docs no longer state the MSRV");
}
