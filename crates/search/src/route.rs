//! Identifier routing: does a query name something (a quoted command, a snake_case key, a
//! dotted or slashed path, a flag, a camelCase name, a word mixing letters and digits)? Such
//! queries lean on BM25, which finds the one chunk holding the exact name that an embedding
//! blurs into its topic.

use std::sync::LazyLock;

use regex::Regex;

// Literal patterns, exercised by the tests below: building them cannot fail.
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"`[^`]+`|"[^"]+"|(?:^|\s)'[^'\s][^']*'(?:$|[\s.,;:?!])"#).expect("literal")
});
static SNAKE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b").expect("literal"));
static DOTTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\w-]+(?:[./][\w-]+)+").expect("literal"));
static FLAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|\s)--?[A-Za-z][\w-]*").expect("literal"));
static CAMEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z]+[A-Z]\w*\b").expect("literal")
});
static WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\w+").expect("literal"));

/// A dotted or slashed path names something unless it is prose like `e.g` or a number.
fn is_real_path(m: &str) -> bool {
    let parts: Vec<&str> = m.split(['.', '/']).filter(|p| !p.is_empty()).collect();
    let has_letter = m.chars().any(|c| c.is_alphabetic());
    let long_part = parts.iter().filter(|p| p.chars().count() >= 2).count();
    has_letter && parts.len() >= 2 && (long_part >= 2 || parts.len() >= 3)
}

/// Whether the query names an identifier and should be fused by score, BM25 first.
pub fn names_identifier(query: &str) -> bool {
    QUOTED.is_match(query)
        || SNAKE.is_match(query)
        || DOTTED.find_iter(query).any(|m| is_real_path(m.as_str()))
        || FLAG.is_match(query)
        || CAMEL.is_match(query)
        || WORD.find_iter(query).any(|m| {
            let w = m.as_str();
            w.chars().count() >= 3
                && w.chars().any(|c| c.is_ascii_alphabetic())
                && w.chars().any(|c| c.is_ascii_digit())
        })
}

/// A lowerCamel name (`allowParallelDedup`, `useAsyncRouter`): code, where an UpperCamel one
/// is as often a product (`PostgreSQL`, `GitHub`).
static LOWER_CAMEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b").expect("literal"));

/// The names `query` writes the way code does, quoted or not, lowercased, each once: a
/// snake_case key or code (`suggest_min_prefix`, `ERR_GVF_TLS_HANDSHAKE`), a flag
/// (`--drain-agents`), a lowerCamel key, a path of three parts or with a slash
/// (`org.matrix.dummy_event`, `/etc/vault.yaml`). Left out, since products and prose are
/// written so too: UpperCamel words, two-part dotted names (`Node.js`, `Rocket.Chat`) and words
/// mixing letters and digits (`ipv6`).
pub fn code_names(query: &str) -> Vec<String> {
    let dotted = DOTTED
        .find_iter(query)
        .map(|m| m.as_str())
        .filter(|m| is_real_path(m) && (m.contains('/') || m.split(['.', '/']).count() >= 3));
    let flags = FLAG.find_iter(query).map(|m| m.as_str().trim());
    let mut names: Vec<String> = Vec::new();
    let found = SNAKE
        .find_iter(query)
        .map(|m| m.as_str())
        .chain(LOWER_CAMEL.find_iter(query).map(|m| m.as_str()))
        .chain(flags)
        .chain(dotted);
    for name in found {
        let name = name.to_lowercase();
        if name.chars().count() >= 3 && !names.contains(&name) {
            names.push(name);
        }
    }
    // A name inside a longer one (`dummy_event` in `org.matrix.dummy_event`) adds nothing.
    let all = names.clone();
    names.retain(|n| {
        !all.iter()
            .any(|other| other != n && other.contains(n.as_str()))
    });
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_are_written_as_code() {
        assert_eq!(
            code_names("what happens when allowParallelDedup is turned on"),
            ["allowparalleldedup"]
        );
        assert_eq!(
            code_names("when would I pass --drain-agents to shipit?"),
            ["--drain-agents"]
        );
        assert_eq!(
            code_names("seeing ERR_GVF_TLS_HANDSHAKE, and `gable_vault.lease.renewals` too"),
            ["err_gvf_tls_handshake", "gable_vault.lease.renewals"]
        );
        assert_eq!(
            code_names("when does synapse send an org.matrix.dummy_event into a room?"),
            ["org.matrix.dummy_event"]
        );
        assert_eq!(
            code_names("edit /etc/gable/vault.yaml"),
            ["etc/gable/vault.yaml"]
        );
        for prose in [
            "PostgreSQL streaming replication on GitHub",
            "migrate from Rocket.Chat or Node.js",
            "why is ipv6 off, version 2.4",
            "how do I restore the backup? e.g. last night's",
            "a well-known on-call rotation",
        ] {
            assert!(
                code_names(prose).is_empty(),
                "{prose}: {:?}",
                code_names(prose)
            );
        }
    }

    #[test]
    fn routes_names() {
        for q in [
            "what is `gable_vault.lease.renewals`?",
            "seeing ERR_GVF_TLS_HANDSHAKE in the logs",
            "what does --skip-canary do",
            "where is /etc/gable-vault/vault.yaml",
            "is allowStreamingWarmup on",
            "the a.b.c key",
            "what is retry_limit",
            "why is ipv6 off",
            "run \"pgtool fetch\" first",
        ] {
            assert!(names_identifier(q), "{q}");
        }
    }

    #[test]
    fn leaves_prose_alone() {
        for q in [
            "how do I restore the backup?",
            "is the doc up-to-date, e.g. for 10:30 today",
            "what's the team's on-call rotation",
            "version 2.4 or newer",
        ] {
            assert!(!names_identifier(q), "{q}");
        }
    }
}
