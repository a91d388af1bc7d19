#!/usr/bin/env bash
# Checks the reader-facing Markdown: every relative link resolves to a file of the
# repository (and, for a `#fragment` into a Markdown file, to one of its headings); every
# Rust block of docs/guide/ followed by a "Full program: [`examples/x.rs`]" line is that
# example's body, and one followed by "This is the doctest of the `m` module" is that
# doctest's visible part; README's quick start is examples/readme_quickstart.rs.
# Run from anywhere: docs/check-links.sh (exit status 1 on a problem).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

problems=$(mktemp)
trap 'rm -f "$problems"' EXIT
# Also called from pipeline subshells: the problems are counted in a file.
fail() {
    printf '%s\n' "$*" | tee -a "$problems" >&2
}

# GitHub's heading anchors: lower case, punctuation other than '-' and '_' dropped, spaces
# to '-'.
anchors() {
    grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//' | tr '[:upper:]' '[:lower:]' |
        sed -E 's/[^[:alnum:] _-]//g; s/ /-/g'
}

files=(README.md BENCHMARKS.md docs/guide/*.md)
for file in "${files[@]}"; do
    dir=$(dirname "$file")
    # Inline links and images: ](target), skipping URLs and in-page anchors.
    { grep -oE '\]\([^)[:space:]]+\)' "$file" || true; } | sed -E 's/^\]\((.*)\)$/\1/' |
        { grep -vE '^(https?:|mailto:|#)' || true; } | sort -u |
        while read -r target; do
            path=${target%%#*}
            fragment=${target#"$path"}
            fragment=${fragment#\#}
            if [ ! -e "$dir/$path" ]; then
                fail "$file: broken link $target"
                continue
            fi
            if [ -n "$fragment" ] && [[ $path == *.md ]] &&
                ! anchors "$dir/$path" | grep -qxF -- "$fragment"; then
                fail "$file: no heading for #$fragment in $path"
            fi
        done
    # In-page anchors.
    { grep -oE '\]\(#[^)]+\)' "$file" || true; } | sed -E 's/^\]\(#(.*)\)$/\1/' | sort -u |
        while read -r fragment; do
            anchors "$file" | grep -qxF -- "$fragment" || fail "$file: no heading for #$fragment"
        done
done

# A guide snippet followed by "Full program: [`examples/x.rs`]" equals that example's body
# (the file without its `//!` header).
for file in docs/guide/*.md; do
    while IFS= read -r example; do
        shown=$(awk -v want="$example" '
            /^```rust/ { inside = 1; block = ""; next }
            inside && /^```/ { inside = 0; last = block; next }
            inside { block = block $0 "\n"; next }
            index($0, "Full program: [`" want "`]") == 1 && last != "" { printf "%s", last; exit }
        ' "$file")
        [ -n "$shown" ] || continue
        body=$(grep -v '^//!' "$example" | sed '1{/^$/d}')
        [ "$shown" == "$body" ] || fail "$file: the snippet above 'Full program: $example' differs from it"
    done < <(grep -oE '^Full program: \[`examples/[a-z_]+\.rs`\]' "$file" | grep -oE 'examples/[a-z_]+\.rs' || true)
done

# A guide snippet followed by "This is the doctest of the `m` module" equals the visible
# lines of the first doctest in src/m/mod.rs.
for file in docs/guide/*.md; do
    while IFS= read -r module; do
        shown=$(awk -v want="This is the doctest of the \`$module\` module" '
            /^```rust/ { inside = 1; block = ""; next }
            inside && /^```/ { inside = 0; last = block; next }
            inside { block = block $0 "\n"; next }
            index($0, want) == 1 && last != "" { printf "%s", last; exit }
        ' "$file")
        doctest=$(sed -n 's|^//! \{0,1\}||p' "src/$module/mod.rs" |
            awk '/^```no_run|^```rust|^```$/ && !inside && !done { inside = 1; next }
                 inside && /^```/ { inside = 0; done = 1; next }
                 inside && !/^# / && $0 != "#" { print }')
        [ "$shown" == "$doctest" ] ||
            fail "$file: the snippet above 'This is the doctest of the \`$module\` module' differs from it"
    done < <(grep -oE '^This is the doctest of the `[a-z]+` module' "$file" | grep -oE '`[a-z]+`' | tr -d '`' || true)
done

# The README's quick start is examples/readme_quickstart.rs.
quick=$(awk '/^```rust/ { inside = 1; next } inside && /^```/ { exit } inside { print }' README.md)
[ "$quick" == "$(grep -v '^//!' examples/readme_quickstart.rs | sed '1{/^$/d}')" ] ||
    fail "README.md: the quick start differs from examples/readme_quickstart.rs"

if [ -s "$problems" ]; then
    echo "docs: $(wc -l <"$problems") problem(s)" >&2
    exit 1
fi
echo "docs: links and snippets ok"
