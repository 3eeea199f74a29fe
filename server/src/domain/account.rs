//! The rules of account names, passwords and display names: pure, so every entry point
//! (claim, sign-in, `hello`) folds and checks a name the same way.
//!
//! Why NFKC then lower case: an account name is unique "ignoring case and Unicode form", so
//! `Ａｌｉｃｅ` (full-width), `ALICE` and `alice` must fold to one key; NFKC maps
//! compatibility forms together, lower case removes case, and NFKC again settles the few
//! characters whose lower case is not normalised.

use unicode_normalization::UnicodeNormalization;

/// Characters an account name may have.
pub const NAME_CHARS: std::ops::RangeInclusive<usize> = 2..=24;
/// Characters a password may have.
pub const PASSWORD_CHARS: std::ops::RangeInclusive<usize> = 8..=256;

/// Why a name or a password is refused, in words for the person who typed it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The account name breaks a rule.
    #[error("an account name is 2-24 letters, digits, '-' or '_'")]
    Name,
    /// The password's length.
    #[error("a password is 8-256 characters")]
    Password,
    /// A display name breaks a rule.
    #[error("{0}")]
    Display(&'static str),
}

/// An account name as it is kept and shown: NFKC, trimmed; checked against the rules.
pub fn account_name(name: &str) -> Result<String, Refused> {
    let n: String = name.trim().nfkc().collect();
    let len = n.chars().count();
    if !NAME_CHARS.contains(&len)
        || !n
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
    {
        return Err(Refused::Name);
    }
    Ok(n)
}

/// The key two names share when they are the same account name (see the module's why).
pub fn name_key(name: &str) -> String {
    let lowered: String = name.trim().nfkc().flat_map(char::to_lowercase).collect();
    lowered.nfkc().collect()
}

/// Checks a new password's length (any characters: it is never shown).
pub fn password(password: &str) -> Result<(), Refused> {
    if PASSWORD_CHARS.contains(&password.chars().count()) {
        Ok(())
    } else {
        Err(Refused::Password)
    }
}

/// Characters that change how text around them is laid out or hide themselves: a name
/// holding one can pass for another or reorder the line it is shown in.
fn invisible_or_bidi(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}'
        | '\u{FEFF}')
}

/// A display name (`hello.name`) as kept: trimmed, 1-24 printable characters without
/// bidirectional controls or invisible formatting characters.
pub fn display_name(name: &str) -> Result<String, Refused> {
    let n = name.trim().to_string();
    let len = n.chars().count();
    if !(1..=24).contains(&len) || n.chars().any(char::is_control) {
        return Err(Refused::Display("name must be 1-24 printable characters"));
    }
    if n.chars().any(invisible_or_bidi) {
        return Err(Refused::Display(
            "name must not hold direction controls or invisible characters (U+200B-U+200F, U+202A-U+202E, U+2060-U+2069, U+FEFF)",
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_case_and_unicode_forms_together() {
        assert_eq!(name_key("Alice"), "alice");
        assert_eq!(name_key("ＡＬＩＣＥ"), "alice");
        assert_eq!(name_key("  alice "), "alice");
        // Composed and decomposed é are one name.
        assert_eq!(name_key("Ren\u{e9}"), name_key("Rene\u{301}"));
        assert_ne!(name_key("alice"), name_key("alicia"));
    }

    #[test]
    fn account_names_keep_to_their_characters() {
        assert_eq!(account_name(" Ūnane_fan-2 ").unwrap(), "Ūnane_fan-2");
        assert_eq!(account_name("ＡＢ").unwrap(), "AB");
        for bad in [
            "a",
            "",
            "has space",
            "dot.name",
            "x".repeat(25).as_str(),
            "emoji🙂",
        ] {
            assert_eq!(account_name(bad), Err(Refused::Name), "{bad:?}");
        }
        assert!(account_name(&"x".repeat(24)).is_ok());
    }

    #[test]
    fn passwords_count_characters() {
        assert_eq!(password("1234567"), Err(Refused::Password));
        assert!(password("12345678").is_ok());
        assert!(password(&"é".repeat(256)).is_ok());
        assert_eq!(password(&"é".repeat(257)), Err(Refused::Password));
    }

    #[test]
    fn display_names_refuse_bidi_and_invisible_characters() {
        assert_eq!(display_name(" Ann ").unwrap(), "Ann");
        for c in [
            '\u{200B}', '\u{200F}', '\u{202A}', '\u{202E}', '\u{2060}', '\u{2069}', '\u{FEFF}',
        ] {
            let name = format!("An{c}n");
            assert!(
                matches!(display_name(&name), Err(Refused::Display(m)) if m.contains("invisible")),
                "{c:?}"
            );
        }
        assert!(display_name("a\u{7}b").is_err());
        assert!(display_name("").is_err());
        // Letters of any script stay welcome.
        assert!(display_name("Ūnane عربي").is_ok());
    }
}
