//! One public path per name: the library's public surface, read from `src/` with `syn`, against
//! the list under "## The public surface" in `docs/architecture.md`.
//!
//! The surface is every `pub` item of a `pub` module reached from `lib.rs` (whatever its feature:
//! `#[cfg]` is not evaluated, `#[cfg(test)]` and `#[cfg(doctest)]` items are left out) and every
//! name a `pub use` in such a module gives. A new `pub` item that is not in the list fails, as does
//! a listed one that is gone, and a name reachable at two paths: a `pub use` of an item that is
//! public where it is defined (an alias, or a front-door name at its module too), or a glob.
//! Hermetic: reads files only.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::{Attribute, Item, UseTree, Visibility};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `attrs` hold `#[cfg(test)]` or `#[cfg(doctest)]` (code no user sees).
fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test" || ident == "doctest")
    })
}

fn public(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// The names a `pub use` tree gives at `module`: each as (`module::name`, the path it names, from
/// the crate root when it starts at `crate`, `self` or `super`, or at a child of `module`).
fn use_leaves(tree: &UseTree, module: &str, source: &[String], out: &mut Vec<(String, String)>) {
    let named = |ident: &syn::Ident| {
        let mut path: Vec<String> = module.split("::").map(str::to_owned).collect();
        for segment in source {
            match segment.as_str() {
                "crate" => path.truncate(1),
                "self" => {}
                "super" => drop(path.pop()),
                other => path.push(other.to_owned()),
            }
        }
        path.push(ident.to_string());
        path.join("::")
    };
    match tree {
        UseTree::Path(path) => {
            let mut deeper = source.to_vec();
            deeper.push(path.ident.to_string());
            use_leaves(&path.tree, module, &deeper, out);
        }
        UseTree::Name(name) => out.push((format!("{module}::{}", name.ident), named(&name.ident))),
        UseTree::Rename(rename) => {
            out.push((format!("{module}::{}", rename.rename), named(&rename.ident)));
        }
        UseTree::Glob(_) => out.push((format!("{module}::*"), format!("{module}::*"))),
        UseTree::Group(group) => group
            .items
            .iter()
            .for_each(|t| use_leaves(t, module, source, out)),
    }
}

/// The file of child module `name` of a module whose children live in `dir`.
fn module_file(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let flat = dir.join(format!("{name}.rs"));
    if flat.is_file() {
        (flat, dir.join(name))
    } else {
        (dir.join(name).join("mod.rs"), dir.join(name))
    }
}

/// The public surface: every path, and for each `pub use` the path it names.
#[derive(Debug, Default)]
struct Surface {
    paths: BTreeSet<String>,
    reexports: BTreeMap<String, String>,
}

/// Every public path of `items` (the module `module`, whose child modules live in `dir`).
fn surface(items: &[Item], module: &str, dir: &Path, out: &mut Surface) {
    for item in items {
        let (vis, attrs, name) = match item {
            Item::Const(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            Item::Enum(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            Item::Fn(i) => (&i.vis, &i.attrs, i.sig.ident.to_string()),
            Item::Static(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            Item::Struct(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            Item::Trait(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            Item::Type(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            Item::Union(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            Item::Use(i) => {
                if public(&i.vis) && !test_only(&i.attrs) {
                    let mut leaves = Vec::new();
                    use_leaves(&i.tree, module, &[], &mut leaves);
                    for (path, names) in leaves {
                        out.paths.insert(path.clone());
                        out.reexports.insert(path, names);
                    }
                }
                continue;
            }
            Item::Mod(i) => {
                if !public(&i.vis) || test_only(&i.attrs) {
                    continue;
                }
                let path = format!("{module}::{}", i.ident);
                out.paths.insert(path.clone());
                match &i.content {
                    Some((_, inline)) => {
                        surface(inline, &path, &dir.join(i.ident.to_string()), out)
                    }
                    None => {
                        let (file, children) = module_file(dir, &i.ident.to_string());
                        let text = fs::read_to_string(&file)
                            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                        let parsed = syn::parse_file(&text)
                            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                        surface(&parsed.items, &path, &children, out);
                    }
                }
                continue;
            }
            _ => continue,
        };
        if public(vis) && !test_only(attrs) {
            out.paths.insert(format!("{module}::{name}"));
        }
    }
}

/// The library's public paths, `mcp_readiness::…`.
fn library_surface() -> Surface {
    let src = root().join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs is readable");
    let parsed = syn::parse_file(&lib).expect("src/lib.rs parses");
    let mut out = Surface::default();
    surface(&parsed.items, "mcp_readiness", &src, &mut out);
    out
}

/// The paths listed in the `text` block under "## The public surface" of `docs/architecture.md`,
/// written as use trees one module each: `mcp_readiness::client::{CallError, Connector, …}`.
fn documented_surface() -> BTreeSet<String> {
    let doc = fs::read_to_string(root().join("docs/architecture.md"))
        .expect("docs/architecture.md is readable");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("The public surface"))
        .expect("docs/architecture.md has a section `## The public surface`");
    let block = section
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the section lists the surface in a ```text block");
    let mut listed = BTreeSet::new();
    for tree in block.split_inclusive('}') {
        let Some((module, names)) = tree.split_once("::{") else {
            continue;
        };
        let module = module.trim();
        for name in names.trim_end_matches('}').split(',') {
            let name = name.trim();
            if !name.is_empty() {
                listed.insert(format!("{module}::{name}"));
            }
        }
    }
    listed
}

#[test]
fn every_public_name_is_listed_in_docs_architecture_and_has_one_path() {
    let Surface { paths, reexports } = library_surface();
    let listed = documented_surface();
    let mut problems = Vec::new();
    for path in paths.difference(&listed) {
        problems.push(format!(
            "`{path}` is public but not listed under \"The public surface\" in docs/architecture.md"
        ));
    }
    for path in listed.difference(&paths) {
        problems.push(format!(
            "docs/architecture.md lists `{path}`, which is not public in src/"
        ));
    }
    // One path per name: a re-export of what is public where it is defined is a second path.
    for (path, names) in &reexports {
        if path.ends_with("::*") {
            problems.push(format!("`{path}`: a glob re-export"));
        } else if paths.contains(names) && names != path {
            problems.push(format!("`{path}` is a second path to `{names}`"));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n\nthe surface today ({} paths):\n{}",
        problems.join("\n"),
        paths.len(),
        paths.iter().cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_reader_follows_modules_uses_and_leaves_tests_out() {
    let items = syn::parse_file(
        "pub mod a { pub struct A; pub(crate) struct Hidden; #[cfg(test)] pub fn t() {} \
         pub mod b { pub fn f() {} } }\n\
         mod private { pub struct P; }\n\
         pub use private::{P, P as Q};\n\
         pub use self::a::b::f as R;\n\
         #[cfg(doctest)] pub mod pages {}",
    )
    .unwrap()
    .items;
    let mut out = Surface::default();
    surface(&items, "c", Path::new("/nowhere"), &mut out);
    assert_eq!(
        out.paths.iter().collect::<Vec<_>>(),
        [
            "c::P",
            "c::Q",
            "c::R",
            "c::a",
            "c::a::A",
            "c::a::b",
            "c::a::b::f"
        ]
    );
    // `R` names `c::a::b::f`, public where it is defined: a second path.
    assert_eq!(out.reexports["c::R"], "c::a::b::f");
    assert_eq!(out.reexports["c::Q"], "c::private::P");
}
