//! How a count reads in a message: `1 master`, `3 masters`, `0 masters`. Every count a person
//! reads goes through [`counted`], so that no message says "need 1 masters".

/// `count` and `noun`, the noun with an `s` unless the count is 1.
pub fn counted(count: usize, noun: &str) -> String {
    format!("{count} {}", noun_for(count, noun))
}

/// `noun`, with an `s` unless `count` is 1: for `… and 3 more places`.
pub fn noun_for(count: usize, noun: &str) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{noun}{plural}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1, "master"), "1 master");
        assert_eq!(counted(0, "master"), "0 masters");
        assert_eq!(counted(3, "slot"), "3 slots");
    }
}
