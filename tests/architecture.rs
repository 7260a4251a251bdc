//! The module graph of the library is a DAG of layers that only look down.
//!
//! Every `use crate::...`, `use super::...` and `crate::...` path in `src/` (comments and
//! string literals left out, `#[cfg(test)]` code included) is resolved to the file that holds
//! the item, through `src/lib.rs`'s re-exports and `#[macro_export]` macros. A file's *unit*
//! is its top-level module (`src/media/decode.rs` is in `media`). The test fails, listing each
//! offending `file:line`, when a unit imports a unit of a higher layer, or when the units form
//! a cycle. The layer table is read from `docs/architecture.md` (one place: the docs and the
//! check cannot disagree); a new top-level module must be added to it.
//!
//! `src/lib.rs` (the facade, which re-exports from every layer) is not a unit. The command line
//! is a package of its own (`cli/`, `vidprep-cli`) that uses the library by its public API
//! only (the compiler holds that); [`the_library_does_not_hold_the_command_line`] checks that
//! nothing of it is left in the library.
//!
//! `cargo test --test integration architecture:: -- --nocapture` also prints the file-level strongly connected
//! components: no cycle may cross from one top-level module to another, and inside one, files
//! may form a cycle only through a folder's `mod.rs`
//! ([`files_form_no_cycle_but_through_a_mod_rs`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, as `docs/architecture.md` gives them (the table between
/// `<!-- layers:begin -->` and `<!-- layers:end -->`: a row per layer, its name in the first
/// column and its top-level modules, in backticks, in the second; a row with an empty first
/// column continues the layer above). A unit may import units of its own layer (without a
/// cycle) and of lower layers, never of higher ones.
fn layers() -> Vec<(String, Vec<String>)> {
    let doc = crate::repo_root().join("docs/architecture.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let begin = text
        .find("<!-- layers:begin -->")
        .expect("docs/architecture.md: no layers:begin marker");
    let end = text
        .find("<!-- layers:end -->")
        .expect("docs/architecture.md: no layers:end marker");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in text[begin..end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || cells[1] == "Layer" || cells[1].starts_with("---") {
            continue;
        }
        let modules: Vec<String> = cells[2]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect();
        assert!(
            !modules.is_empty(),
            "docs/architecture.md: layer row without modules: {line}"
        );
        if cells[1].is_empty() {
            // A row with no layer name continues the layer above (short lines).
            let (_, above) = out
                .last_mut()
                .expect("docs/architecture.md: the first layer row has no name");
            above.extend(modules);
            continue;
        }
        out.push((cells[1].to_string(), modules));
    }
    assert!(
        out.len() > 1,
        "docs/architecture.md: the layer table is empty"
    );
    out
}

/// One resolved reference: the file and line it is written on and the file it names.
#[derive(Debug, Clone)]
struct Edge {
    from: PathBuf,
    line: usize,
    to: PathBuf,
    path: String,
}

fn src_dir() -> PathBuf {
    crate::repo_root().join("src")
}

/// Every `.rs` file under `src/`, keyed by its module path (`media::decode`); `lib.rs` is `[]`.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let mut segs: Vec<String> = rel
                .iter()
                .map(|s| s.to_str().unwrap().trim_end_matches(".rs").to_string())
                .collect();
            if segs.last().map(String::as_str) == Some("mod") {
                segs.pop();
            }
            if segs == ["lib"] {
                segs.clear();
            }
            out.insert(segs, path);
        }
    }
    out
}

/// The text with comments and the contents of string and char literals blanked out (newlines
/// kept, so that line numbers hold).
fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // A raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            for _ in i..=j {
                out.push(' ');
            }
            i = j + 1;
            loop {
                if i >= b.len() {
                    break;
                }
                if b[i] == '"' && (0..hashes).all(|k| b.get(i + 1 + k) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += 1 + hashes;
                    break;
                }
                out.push(blank(b[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{..}') or a lifetime ('a).
            let end = if next == Some('\\') {
                (i + 2..b.len()).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    for _ in i..=e {
                        out.push(' ');
                    }
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Expands a use tree (`crate::{a::b, c::{d, e as f}}`) into its paths.
fn expand(tree: &str) -> Vec<Vec<String>> {
    fn go(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            let mut p = prefix.to_vec();
            p.extend(head);
            let inner = &tree[open + 1..tree.rfind('}').unwrap()];
            let mut depth = 0;
            let mut start = 0;
            for (k, ch) in inner.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        go(&inner[start..k], &p, out);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            go(&inner[start..], &p, out);
        } else {
            let tree = tree.split(" as ").next().unwrap();
            let mut p = prefix.to_vec();
            p.extend(
                tree.split("::")
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && *s != "self" && *s != "*")
                    .map(String::from),
            );
            out.push(p);
        }
    }
    let mut out = Vec::new();
    go(tree, &[], &mut out);
    out
}

/// The paths a file names: `(line, path from the crate root)`, with `super::` and `self::`
/// made absolute from the file's module path `here`.
fn references(code: &str, here: &[String]) -> Vec<(usize, Vec<String>)> {
    let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
    let inline = inline_modules(code);
    // The module `super` and `self` are relative to: the file's module (`a/b.rs` is `a::b`),
    // and inside it the inline modules (`mod tests { .. }`) around the path.
    let absolute = |at: usize, mut p: Vec<String>| -> Option<Vec<String>> {
        let mut base: Vec<String> = here.to_vec();
        for (name, s, e) in &inline {
            if at > *s && at < *e {
                base.push(name.clone());
            }
        }
        match p.first().map(String::as_str) {
            Some("crate") => {
                p.remove(0);
                Some(p)
            }
            Some("super") => {
                while p.first().map(String::as_str) == Some("super") {
                    p.remove(0);
                    base.pop()?;
                }
                base.extend(p);
                Some(base)
            }
            Some("self") => {
                p.remove(0);
                base.extend(p);
                Some(base)
            }
            _ => None,
        }
    };
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut use_spans: Vec<(usize, usize)> = Vec::new();
    // `use` items.
    let bytes = code.as_bytes();
    let mut pos = 0;
    while let Some(k) = code[pos..].find("use ") {
        let at = pos + k;
        pos = at + 4;
        let before_ok = at == 0 || !is_ident(bytes[at - 1] as char);
        if !before_ok {
            continue;
        }
        let Some(end) = code[at..].find(';') else {
            break;
        };
        let tree = &code[at + 4..at + end];
        let first = tree.trim_start();
        if !(first.starts_with("crate")
            || first.starts_with("super")
            || first.starts_with("self")
            || first.starts_with("{"))
        {
            continue;
        }
        use_spans.push((at, at + end));
        for p in expand(tree) {
            if let Some(abs) = absolute(at, p) {
                out.push((line_of(at), abs));
            }
        }
    }
    // `crate::a::b` and `super::a` paths elsewhere.
    let _ = chars;
    for key in ["crate::", "super::"] {
        let mut pos = 0;
        while let Some(k) = code[pos..].find(key) {
            let at = pos + k;
            pos = at + key.len();
            if at > 0 && (is_ident(bytes[at - 1] as char) || bytes[at - 1] == b':') {
                continue;
            }
            if use_spans.iter().any(|&(s, e)| at >= s && at < e) {
                continue;
            }
            let mut end = at;
            while end < code.len() && (is_ident(bytes[end] as char) || bytes[end] == b':') {
                end += 1;
            }
            let segs: Vec<String> = code[at..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            if let Some(abs) = absolute(at, segs) {
                out.push((line_of(at), abs));
            }
        }
    }
    out
}

/// The inline modules of a file (`mod tests { .. }`): name, start and end offsets, outermost
/// first.
fn inline_modules(code: &str) -> Vec<(String, usize, usize)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(k) = code[pos..].find("mod ") {
        let at = pos + k;
        pos = at + 4;
        if at > 0 && is_ident(bytes[at - 1] as char) {
            continue;
        }
        let rest = &code[at + 4..];
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        let after = rest[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = at + 4 + name.len() + (rest.len() - name.len() - after.len());
        let mut depth = 0;
        let mut end = code.len();
        for (k, ch) in code[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((name, open, end));
    }
    out
}

/// `src/lib.rs`'s re-exports (`pub use a::b::{C, D as E}`): name at the root -> its path.
fn root_names(lib_code: &str) -> BTreeMap<String, Vec<String>> {
    let mut names = BTreeMap::new();
    let mut pos = 0;
    while let Some(k) = lib_code[pos..].find("pub use ") {
        let at = pos + k;
        let end = at + lib_code[at..].find(';').unwrap();
        pos = end;
        let tree = &lib_code[at + 8..end];
        // Keep the `as` names: expand without dropping them.
        for part in expand_with_alias(tree) {
            names.insert(part.0, part.1);
        }
    }
    names
}

fn expand_with_alias(tree: &str) -> Vec<(String, Vec<String>)> {
    // Re-expand, reading `x as y` leaves.
    let mut out = Vec::new();
    let flat = tree.replace(char::is_whitespace, " ");
    let mut leaves: Vec<(Vec<String>, Option<String>)> = Vec::new();
    fn go(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let mut p = prefix.to_vec();
            p.extend(
                tree[..open]
                    .split("::")
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
            let inner = &tree[open + 1..tree.rfind('}').unwrap()];
            let (mut depth, mut start) = (0, 0);
            for (k, ch) in inner.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        go(&inner[start..k], &p, out);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            go(&inner[start..], &p, out);
        } else {
            let mut it = tree.split(" as ");
            let path = it.next().unwrap();
            let alias = it.next().map(|s| s.trim().to_string());
            let mut p = prefix.to_vec();
            p.extend(
                path.split("::")
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
            out.push((p, alias));
        }
    }
    go(&flat, &[], &mut leaves);
    for (mut path, alias) in leaves {
        if path.first().map(String::as_str) == Some("crate") {
            path.remove(0);
        }
        let name = alias.unwrap_or_else(|| path.last().cloned().unwrap_or_default());
        out.push((name, path));
    }
    out
}

/// The file a path from the crate root names: the longest module prefix, after following a
/// root re-export or a `#[macro_export]` macro.
fn resolve(
    path: &[String],
    mods: &BTreeMap<Vec<String>, PathBuf>,
    roots: &BTreeMap<String, Vec<String>>,
    macros: &BTreeMap<String, PathBuf>,
) -> Option<PathBuf> {
    let mut path = path.to_vec();
    for _ in 0..4 {
        let first = path.first()?.clone();
        if mods.contains_key(&vec![first.clone()]) {
            break;
        }
        if let Some(file) = macros.get(&first) {
            return Some(file.clone());
        }
        let target = roots.get(&first)?;
        let mut p = target.clone();
        p.extend(path.drain(1..));
        path = p;
    }
    (1..=path.len())
        .rev()
        .find_map(|n| mods.get(&path[..n].to_vec()).cloned())
}

struct Graph {
    src: PathBuf,
    mods: BTreeMap<Vec<String>, PathBuf>,
    edges: Vec<Edge>,
}

fn graph() -> Graph {
    let src = src_dir();
    let mods = modules(&src);
    let lib_code = code_only(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let roots = root_names(&lib_code);
    let mut macros = BTreeMap::new();
    for file in mods.values() {
        let text = std::fs::read_to_string(file).unwrap();
        let mut lines = text.lines().peekable();
        while let Some(l) = lines.next() {
            if l.trim() == "#[macro_export]" {
                if let Some(next) = lines.peek() {
                    if let Some(rest) = next.trim().strip_prefix("macro_rules!") {
                        let name: String =
                            rest.trim().chars().take_while(|&c| is_ident(c)).collect();
                        macros.insert(name, file.clone());
                    }
                }
            }
        }
    }
    let mut edges = Vec::new();
    for (here, file) in &mods {
        if here.is_empty() {
            continue; // lib.rs: the facade
        }
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for (line, path) in references(&code, here) {
            if let Some(to) = resolve(&path, &mods, &roots, &macros) {
                if &to != file {
                    edges.push(Edge {
                        from: file.clone(),
                        line,
                        to,
                        path: path.join("::"),
                    });
                }
            }
        }
    }
    Graph { src, mods, edges }
}

impl Graph {
    fn rel(&self, p: &Path) -> String {
        format!("src/{}", p.strip_prefix(&self.src).unwrap().display())
    }

    fn unit(&self, p: &Path) -> String {
        let rel = p.strip_prefix(&self.src).unwrap();
        let first = rel.iter().next().unwrap().to_str().unwrap();
        first.trim_end_matches(".rs").to_string()
    }

    /// The top-level modules (every file's unit but `lib.rs`).
    fn units(&self) -> BTreeSet<String> {
        self.mods
            .values()
            .filter(|f| f.parent() != Some(&self.src) || f.file_name().unwrap() != "lib.rs")
            .map(|f| self.unit(f))
            .collect()
    }

    /// Which top-level modules each one uses (itself left out).
    fn unit_edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut adj: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for e in &self.edges {
            let (a, b) = (self.unit(&e.from), self.unit(&e.to));
            if a != b {
                adj.entry(a).or_default().insert(b);
            }
        }
        adj
    }
}

fn layer_of(layers: &[(String, Vec<String>)], unit: &str) -> Option<usize> {
    layers
        .iter()
        .position(|(_, units)| units.iter().any(|u| u == unit))
}

/// Strongly connected components with more than one node (Tarjan).
fn cycles(nodes: &BTreeSet<String>, adj: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        adj: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        n: usize,
        out: Vec<Vec<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        t.index.insert(v.to_string(), t.n);
        t.low.insert(v.to_string(), t.n);
        t.n += 1;
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        let next: Vec<String> = t
            .adj
            .get(v)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        for w in next {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let lw = t.low[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(&w);
                let done = w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        n: 0,
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn every_top_level_module_has_a_layer() {
    let g = graph();
    let units = g.units();
    let layers = layers();
    let missing: Vec<&String> = units
        .iter()
        .filter(|u| layer_of(&layers, u).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "top-level modules missing from the layer table of docs/architecture.md: {missing:?}"
    );
}

#[test]
fn layers_only_look_down() {
    let g = graph();
    let layers = layers();
    let mut bad = Vec::new();
    for e in &g.edges {
        let (a, b) = (g.unit(&e.from), g.unit(&e.to));
        if a == b {
            continue;
        }
        let (Some(la), Some(lb)) = (layer_of(&layers, &a), layer_of(&layers, &b)) else {
            continue;
        };
        if lb > la {
            bad.push(format!(
                "{}:{}: `{}` ({} layer) uses `{}` ({} layer, above it)",
                g.rel(&e.from),
                e.line,
                e.path,
                layers[la].0,
                b,
                layers[lb].0
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} upward imports:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn modules_form_no_cycle() {
    let g = graph();
    let mut adj: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut nodes = BTreeSet::new();
    for e in &g.edges {
        let (a, b) = (g.unit(&e.from), g.unit(&e.to));
        nodes.insert(a.clone());
        nodes.insert(b.clone());
        if a != b {
            adj.entry(a).or_default().insert(b);
        }
    }
    let comps = cycles(&nodes, &adj);
    // The same at file level, for the record (parents and children may refer to each other).
    let mut fadj: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut fnodes = BTreeSet::new();
    for e in &g.edges {
        let (a, b) = (g.rel(&e.from), g.rel(&e.to));
        fnodes.insert(a.clone());
        fnodes.insert(b.clone());
        fadj.entry(a).or_default().insert(b);
    }
    let fcomps = cycles(&fnodes, &fadj);
    let mut sizes: Vec<usize> = fcomps.iter().map(Vec::len).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    println!(
        "{} files, {} references across files; file-level cycles (sizes): {sizes:?}",
        g.mods.len(),
        g.edges.len()
    );
    for c in &fcomps {
        let units: BTreeSet<String> = c
            .iter()
            .map(|f| {
                f.trim_start_matches("src/")
                    .split(['/', '.'])
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let across = if units.len() > 1 {
            "ACROSS MODULES "
        } else {
            ""
        };
        println!("  {across}{}", c.join(", "));
    }
    let mut report = Vec::new();
    for comp in &comps {
        report.push(format!("cycle of modules: {}", comp.join(" <-> ")));
        for e in &g.edges {
            let (a, b) = (g.unit(&e.from), g.unit(&e.to));
            if a != b && comp.contains(&a) && comp.contains(&b) {
                report.push(format!(
                    "  {}:{}: `{}` ({a} -> {b})",
                    g.rel(&e.from),
                    e.line,
                    e.path
                ));
            }
        }
    }
    assert!(comps.is_empty(), "{}", report.join("\n"));
}

/// The shape #54 asked for: at most 16 top-level modules, and no chain of top-level modules
/// (each using the next) longer than 13. Prints the count and the longest chain, which
/// `docs/architecture.md` quotes.
#[test]
fn few_top_level_modules_and_short_chains() {
    let g = graph();
    let units = g.units();
    let adj = g.unit_edges();
    // The longest path from each unit, memoised (a cycle is `modules_form_no_cycle`'s to
    // report: a unit met again on the way counts as a dead end here).
    fn longest(
        u: &str,
        adj: &BTreeMap<String, BTreeSet<String>>,
        memo: &mut BTreeMap<String, Vec<String>>,
        on: &mut BTreeSet<String>,
    ) -> Vec<String> {
        if let Some(p) = memo.get(u) {
            return p.clone();
        }
        on.insert(u.to_string());
        let mut best: Vec<String> = Vec::new();
        for v in adj.get(u).into_iter().flatten() {
            if on.contains(v) {
                continue;
            }
            let p = longest(v, adj, memo, on);
            if p.len() > best.len() {
                best = p;
            }
        }
        on.remove(u);
        let mut path = vec![u.to_string()];
        path.extend(best);
        memo.insert(u.to_string(), path.clone());
        path
    }
    let mut memo = BTreeMap::new();
    let mut chain: Vec<String> = Vec::new();
    for u in &units {
        let p = longest(u, &adj, &mut memo, &mut BTreeSet::new());
        if p.len() > chain.len() {
            chain = p;
        }
    }
    println!(
        "{} top-level modules; longest chain ({}): {}",
        units.len(),
        chain.len(),
        chain.join(" -> ")
    );
    assert!(
        units.len() <= 16,
        "{} top-level modules (at most 16): {units:?}; fold one into the folder of its job",
        units.len()
    );
    assert!(
        chain.len() <= 13,
        "a chain of {} top-level modules (at most 13): {}",
        chain.len(),
        chain.join(" -> ")
    );
}

/// The facade by namespaces (#54): the crate root holds the main job's nine names and the
/// error; everything else a library user reaches is under a public module named by its job.
/// A new root name is a design change: it must be added here, on purpose.
#[test]
fn the_root_holds_the_main_job_and_the_error() {
    let lib = code_only(&std::fs::read_to_string(src_dir().join("lib.rs")).unwrap());
    // The root's own text: inline modules (`pub mod boxes { .. }`) blanked out.
    let mut root = lib.clone().into_bytes();
    for (_, start, end) in inline_modules(&lib) {
        for b in &mut root[start..end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    let root = String::from_utf8(root).unwrap();
    let files = modules(&src_dir());
    let mut names = BTreeSet::new();
    let mut modules = BTreeSet::new();
    // A re-export of a module (`pub use vocab::time;`) is a namespace, not a root name.
    for (name, path) in root_names(&root) {
        if files.contains_key(&path) {
            modules.insert(name);
        } else {
            names.insert(name);
        }
    }
    for line in root.lines() {
        let line = line.trim();
        for kind in [
            "pub mod ",
            "pub fn ",
            "pub struct ",
            "pub enum ",
            "pub trait ",
            "pub type ",
            "pub const ",
            "pub static ",
        ] {
            if let Some(rest) = line.strip_prefix(kind) {
                let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
                if kind == "pub mod " {
                    modules.insert(name);
                } else {
                    names.insert(name);
                }
            }
        }
    }
    for (name, _, _) in inline_modules(&lib) {
        modules.insert(name);
    }
    modules.remove("tests");
    println!("root names: {names:?}\nnamespaces: {modules:?}");
    let expected: BTreeSet<String> = [
        "Plan",
        "execute",
        "Destination",
        "ExecOptions",
        "Outcome",
        "Progress",
        "NoProgress",
        "run_batch",
        "BatchOptions",
        "Error",
        "ErrorKind",
        "Result",
        "ReadmeDoctests",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let extra: Vec<&String> = names.difference(&expected).collect();
    assert!(
        extra.is_empty(),
        "src/lib.rs: names at the crate root beyond the main job's and the error: {extra:?}; \
         put them under the public module of their job"
    );
}

/// Files may refer to each other in a circle only through a folder's `mod.rs` (the trait its
/// children implement and the registry that names them, as `frames/tracking/mod.rs` and
/// `frames/tracking/opencv.rs`); `media/` is no exception since its circle went (#54). Elsewhere the
/// files of a folder look one way: a shared piece goes into a small file below both users
/// (`exports/claimed.rs`, `frames/stages/builder.rs`, `call/output/temporaries.rs`), so the circles
/// `exports/clip - copy - smart/write`, `stages/stream - insert - span` and
/// `output/group - ownership` cannot come back.
#[test]
fn files_form_no_cycle_but_through_a_mod_rs() {
    let g = graph();
    let mut adj: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut nodes = BTreeSet::new();
    for e in &g.edges {
        let (a, b) = (g.rel(&e.from), g.rel(&e.to));
        nodes.insert(a.clone());
        nodes.insert(b.clone());
        adj.entry(a).or_default().insert(b);
    }
    let mut report = Vec::new();
    for comp in cycles(&nodes, &adj) {
        // The same files without the `mod.rs` files: a circle left is one between siblings.
        let rest: BTreeSet<String> = comp
            .iter()
            .filter(|f| !f.ends_with("/mod.rs"))
            .cloned()
            .collect();
        let sub: BTreeMap<String, BTreeSet<String>> = rest
            .iter()
            .map(|f| {
                let to = adj
                    .get(f)
                    .map_or_else(BTreeSet::new, |t| t.intersection(&rest).cloned().collect());
                (f.clone(), to)
            })
            .collect();
        for c in cycles(&rest, &sub) {
            report.push(format!("cycle of files: {}", c.join(" <-> ")));
            for e in &g.edges {
                let (a, b) = (g.rel(&e.from), g.rel(&e.to));
                if c.contains(&a) && c.contains(&b) {
                    report.push(format!("  {a}:{}: `{}` (-> {b})", e.line, e.path));
                }
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The library reads no environment variable: its settings come in the options
/// (`vidprep::call::Settings`), and the doors (`cli/`, `python/`) read the environment. Unit
/// tests (`mod tests`, `*/tests.rs`) may.
#[test]
fn the_library_reads_no_environment() {
    let src = src_dir();
    let mut found = Vec::new();
    for (segs, path) in modules(&src) {
        if segs.last().map(String::as_str) == Some("tests") {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&path).unwrap());
        let code = match code.find("\nmod tests") {
            Some(at) => &code[..at],
            None => &code[..],
        };
        for (n, line) in code.lines().enumerate() {
            let squashed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if ["env::var", "env::vars", "getenv", "var_os"]
                .iter()
                .any(|w| squashed.contains(w))
            {
                found.push(format!(
                    "{}:{}: {}",
                    path.strip_prefix(&src).unwrap().display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the library reads the environment (put it in vidprep::call::Settings, filled by the doors):\n{}",
        found.join("\n")
    );
}

/// The plan (the public schema) is spelt in the vocabulary below it (`vocab`, `annotations`,
/// `profiles`, ...) and checks itself without opening media: nothing in `plan/` names `media`,
/// `frames` (the pipeline, its stages and trackers, drawing, placement) or anything above
/// them. (`crate::batch::manifest` reads manifests and checks the sources they name; it sits
/// above `media`.)
#[test]
fn the_plan_names_nothing_that_opens_media_or_draws() {
    let g = graph();
    let forbidden = [
        "media", "frames", "records", "exports", "exec", "batch", "check", "detect", "review",
    ];
    let mut found = Vec::new();
    for e in &g.edges {
        let (from, to) = (g.rel(&e.from), g.rel(&e.to));
        if !from.starts_with("src/plan/") {
            continue;
        }
        let top = to
            .trim_start_matches("src/")
            .split(['/', '.'])
            .next()
            .unwrap_or_default()
            .to_string();
        if forbidden.contains(&top.as_str()) {
            found.push(format!("{from}:{}: `{}` (-> {to})", e.line, e.path));
        }
    }
    assert!(
        found.is_empty(),
        "the plan reaches up:\n{}",
        found.join("\n")
    );
}

/// The command line is its own package (`cli/`): the library has no `cli` feature, no code
/// behind one, no `src/main.rs` or `src/cli/`, and none of the crates only a command line
/// needs among its dependencies.
#[test]
fn the_library_does_not_hold_the_command_line() {
    let root = crate::repo_root();
    assert!(
        !root.join("src/main.rs").exists(),
        "src/main.rs: the binary is cli/src/main.rs"
    );
    assert!(
        !root.join("src/cli").exists(),
        "src/cli/: the command line is cli/src/"
    );
    let gated: Vec<String> = modules(&src_dir())
        .values()
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("feature = \"cli\"")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(gated.is_empty(), "code behind a `cli` feature: {gated:?}");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let dependencies = manifest
        .split("\n[")
        .filter(|table| table.starts_with("dependencies]") || table.contains("dependencies]\n"))
        .filter(|table| !table.contains("dev-dependencies]"))
        .collect::<Vec<_>>()
        .join("\n");
    for name in ["clap", "anyhow", "indicatif", "ctrlc"] {
        assert!(
            !dependencies
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{name} "))
                    || l.trim_start().starts_with(&format!("{name}="))),
            "the library depends on {name}, a crate of the command line (cli/Cargo.toml)"
        );
    }
}

/// FFmpeg stays behind one wall (#54): only `src/media/` names the binding (`ffmpeg_next`,
/// `ffmpeg_sys_next`, or an alias `ffmpeg::` of it) and only it reaches the raw calls
/// (`media::ffi`, `media::compat`, where all but five `unsafe` sites are: docs/architecture.md,
/// "FFmpeg behind one wall"). The layers above work with media's
/// own types: `Picture` for a decoded picture, `PixelFormat`, `Scaling`, and
/// `FfmpegError` for what FFmpeg reported. The command line and the Python package (thin doors)
/// name none of it either. Tests (`mod tests`) are held to it too.
#[test]
fn only_media_names_ffmpeg() {
    let root = crate::repo_root();
    let mut files = Vec::new();
    for dir in ["src", "cli/src", "python/src"] {
        let dir = root.join(dir);
        if dir.is_dir() {
            files.extend(modules(&dir).into_values());
        }
    }
    let media = root.join("src/media");
    let mut found = Vec::new();
    let mut outside = 0;
    for path in files.iter().filter(|p| !p.starts_with(&media)) {
        outside += 1;
        let code = code_only(&std::fs::read_to_string(path).unwrap());
        for (n, line) in code.lines().enumerate() {
            let squashed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if [
                "ffmpeg_next",
                "ffmpeg_sys_next",
                "ffmpeg::",
                "media::ffi",
                "media::compat",
            ]
            .iter()
            .any(|w| squashed.contains(w))
            {
                found.push(format!(
                    "{}:{}: {}",
                    path.strip_prefix(&root).unwrap().display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        outside > 100,
        "only {outside} files outside src/media/ were read"
    );
    assert!(
        found.is_empty(),
        "FFmpeg named outside src/media/ (use media's own types: Picture, PixelFormat, Scaling, \
         FfmpegError; or add what is missing to media):\n{}",
        found.join("\n")
    );
}
