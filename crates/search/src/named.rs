//! Queries that name a document: by its title or one of its aliases, as whole words, ignoring
//! case and punctuation (`gable-vault` names "Gable Vault"). The name tells which document;
//! the rest of the query tells which section, so the rest is what ranks that document's
//! sections against each other.

use ragdown_index::Snapshot;

/// Lowercase words joined by single spaces, with a space at each end for whole-word matching.
fn words(text: &str) -> String {
    let mut out = String::from(" ");
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        out.push_str(&word.to_lowercase());
        out.push(' ');
    }
    out
}

#[derive(Debug, Default, PartialEq)]
pub struct Named {
    /// Ids of the documents the query names.
    pub documents: Vec<i64>,
    /// Ids of those named by an alias (a subset of `documents`).
    pub by_alias: Vec<i64>,
    /// The query without the names.
    pub rest: String,
}

/// Finds the documents a query names (titles and aliases of at least three characters).
pub fn named_documents(snap: &Snapshot, query: &str, allowed: &[bool]) -> Named {
    let query_words = words(query);
    let mut rest = query_words.clone();
    let mut named = Named::default();
    for doc in snap.documents() {
        if !allowed.get(doc.id as usize).copied().unwrap_or(false) {
            continue;
        }
        let mut hit = false;
        for (i, name) in std::iter::once(&doc.title).chain(&doc.aliases).enumerate() {
            let name_words = words(name);
            if name_words.trim().chars().count() < 3 || !query_words.contains(&name_words) {
                continue;
            }
            hit = true;
            if i > 0 && !named.by_alias.contains(&doc.id) {
                named.by_alias.push(doc.id);
            }
            rest = rest.replace(&name_words, " ");
        }
        if hit {
            named.documents.push(doc.id);
        }
    }
    named.documents.sort_unstable();
    named.by_alias.sort_unstable();
    named.rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    named
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn words_ignore_case_and_punctuation() {
        assert_eq!(words("Gable-Vault's restore?"), " gable vault s restore ");
        assert!(words("How do I undo gable-vault?").contains(&words("Gable Vault")));
        assert!(!words("gable vaults").contains(&words("Gable Vault")));
    }
}
