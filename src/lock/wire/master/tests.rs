//! Unit tests of `master`.

use super::redact::percent_decoded;
use super::*;

#[test]
fn display_never_shows_the_password() {
    let m = Master::parse("redis://alice:s3cret@db1:6380/2").unwrap();
    assert_eq!(m.to_string(), "redis://alice:***@db1:6380/2");
    assert!(!format!("{m:?}").contains("s3cret"));
    let m = Master::parse("redis://:s3cret@db1:6380").unwrap();
    assert_eq!(m.to_string(), "redis://:***@db1:6380");
}

#[test]
fn redact_url_hides_userinfo_in_any_shape() {
    for (url, shown) in [
        ("redis://bob:pw@h:notaport", "redis://***@h:notaport"),
        ("redis:/:pw@h:1", "redis:/***@h:1"),
        ("redis//:pw@h:1", "redis//***@h:1"),
        ("//u:pw@h:1", "//***@h:1"),
        ("u:pw@h:1", "u:***@h:1"),
        (":pw@h:1", "***@h:1"),
        ("rediss:pw@h", "rediss:***@h"),
        ("redis://:pw@[::1", "redis://***@[::1"),
        ("redis://:pw@h:1/notadb", "redis://***@h:1/notadb"),
        ("redis://:p@ss/w?rd@h:1", "redis://***@h:1"),
        ("redis://:my pw@h:1", "redis://***@h:1"),
        ("redis://:p\nw@h:1", "redis://***@h:1"),
        ("redis://:pässwörd@h:x", "redis://***@h:x"),
        ("redis://@h:1", "redis://@h:1"),
    ] {
        assert_eq!(redact_url(url), shown, "{url:?}");
    }
}

#[test]
fn redact_url_hides_what_may_be_a_password_without_an_at() {
    for (url, shown) in [
        // The `@host` forgotten, or cut off at a space by $REDLOCK_SERVERS' splitting.
        ("redis://user:password", "redis://user:***"),
        ("redis://:password", "redis://:***"),
        ("redis://:1234", "redis://:***"),
        ("u:pw", "u:***"),
        ("rediss:pw", "rediss:***"),
        ("redis://h:notaport/1", "redis://h:***/1"),
        // Nothing to hide.
        ("redis://h:1", "redis://h:1"),
        ("redis://h", "redis://h"),
        ("redis://[::1]:6379/2", "redis://[::1]:6379/2"),
        ("localhost:6379", "localhost:6379"),
        ("127.0.0.1", "127.0.0.1"),
        (
            "rediss://127.0.0.1:6379/#insecure",
            "rediss://127.0.0.1:6379/#insecure",
        ),
        ("redis+unix:///tmp/r.sock", "redis+unix:///tmp/r.sock"),
    ] {
        assert_eq!(redact_url(url), shown, "{url:?}");
    }
}

#[test]
fn redact_url_hides_query_values_but_db_and_protocol() {
    for (url, shown) in [
        (
            "redis+unix:///tmp/r.sock?pass=pw&db=1",
            "redis+unix:///tmp/r.sock?pass=***&db=1",
        ),
        (
            "redis://h:1/?password=pw&protocol=resp3",
            "redis://h:1/?password=***&protocol=resp3",
        ),
        ("redis://h:1/?pw#frag", "redis://h:1/?***#frag"),
    ] {
        assert_eq!(redact_url(url), shown, "{url:?}");
    }
}

#[test]
fn redact_url_keeps_a_message_on_one_line() {
    assert_eq!(redact_url("redis://h:1/\n2"), "redis://h:1/\\n2");
    assert_eq!(redact_url("redis://h\t:1"), "redis://h\\t:1");
}

#[test]
fn redact_quoted_redacts_each_quoted_value() {
    assert_eq!(
        redact_quoted(r#"invalid type: string "redis://:pw@h:1", expected a sequence"#),
        r#"invalid type: string "redis://***@h:1", expected a sequence"#
    );
    assert_eq!(redact_quoted("no quotes"), "no quotes");
    assert_eq!(redact_quoted(r#"a "u:pw" b "c""#), r#"a "u:***" b "c""#);
}

#[test]
fn urls_with_spaces_or_control_characters_are_refused() {
    for url in ["redis://:my pw@h:1", "redis://:p\nw@h:1", "redis://h:1/\t0"] {
        let err = Master::parse(url).unwrap_err();
        assert!(err.reason.contains("control character"), "{url:?}: {err}");
        assert!(!err.to_string().contains("pw"), "{err}");
    }
}

#[test]
fn percent_decoding_for_comparison() {
    assert_eq!(percent_decoded("S3cr%33t%2"), "S3cr3t%2");
    assert!(shows_any("bad S3cr3t", &["S3cr%33t"]));
    assert!(!shows_any("Redis URL did not parse", &["S3cr3t", ""]));
}

#[test]
fn same_master_under_two_spellings_has_one_identity() {
    let a = Master::parse("redis://localhost:6379/0").unwrap();
    let b = Master::parse("redis://127.0.0.1:6379/3").unwrap();
    let c = Master::parse("redis://127.0.0.1:6380").unwrap();
    assert_eq!(a.identity(), b.identity());
    assert_ne!(a.identity(), c.identity());
}

#[test]
fn every_spelling_of_an_ip_address_has_one_identity() {
    let identity = |url: &str| Master::parse(url).unwrap().identity();
    for same in [
        "redis://127.1:6379",
        "redis://2130706433:6379",
        "redis://0x7f000001:6379",
        "redis://127.000.000.001:6379",
        "redis://[::ffff:127.0.0.1]:6379",
        "redis://[::1]:6379",
        "redis://LOCALHOST:6379",
    ] {
        assert_eq!(identity(same), identity("redis://127.0.0.1:6379"), "{same}");
    }
    for same in ["redis://10.1:6379", "redis://[::ffff:10.0.0.1]:6379"] {
        assert_eq!(identity(same), identity("redis://10.0.0.1:6379"), "{same}");
    }
    assert_eq!(
        identity("redis://[2001:DB8::1]:6379"),
        identity("redis://[2001:db8:0:0:0:0:0:1]:6379")
    );
    assert_ne!(
        identity("redis://10.0.0.1:6379"),
        identity("redis://10.0.0.2:6379")
    );
    // Names are never looked up, only compared.
    assert_eq!(identity("redis://Db1:6379"), identity("redis://db1:6379"));
    assert_ne!(identity("redis://db1:6379"), identity("redis://db2:6379"));
}

#[test]
fn tls_without_verification_is_refused() {
    let err = Master::parse("rediss://h:6380/#insecure").unwrap_err();
    assert!(err.to_string().contains("--tls-ca-cert"), "{err}");
}

#[test]
fn rediss_urls_are_tls_addresses() {
    let m = Master::parse("rediss://u:pw@db1:6380/1").unwrap();
    assert!(m.is_tls());
    assert_eq!(m.to_string(), "rediss://u:***@db1:6380/1");
    assert!(!Master::parse("redis://db1:6380").unwrap().is_tls());
}

#[test]
fn rejects_urls_without_scheme_or_host() {
    assert!(Master::parse("localhost:6379").is_err());
    assert!(Master::parse("redis://").is_err());
    let err = Master::parse("redis://u:topsecret@h:99999").unwrap_err();
    assert!(!err.to_string().contains("topsecret"), "{err}");
}

#[test]
fn a_port_out_of_range_is_named() {
    for (url, port) in [
        ("redis://h:99999", "99999"),
        ("redis://u:topsecret@h:0/1", "0"),
        ("rediss://h:65536", "65536"),
    ] {
        let err = Master::parse(url).unwrap_err();
        assert!(
            err.reason
                .contains(&format!("port {port} is out of range (1 to 65535)")),
            "{url}: {err}"
        );
        assert!(!err.to_string().contains("topsecret"), "{err}");
    }
    assert!(Master::parse("redis://h:65535").is_ok());
}

#[test]
fn the_database_is_read_from_the_path_or_the_query() {
    let db = |url: &str| Master::parse(url).unwrap().login().db;
    assert_eq!(db("redis://h:1"), 0);
    assert_eq!(db("redis://h:1/"), 0);
    assert_eq!(db("redis://h:1/2"), 2);
    assert_eq!(db("redis://h:1?db=2"), 2);
    assert_eq!(db("redis://h:1/?db=2"), 2);
    assert_eq!(db("redis://h:1/2?db=2"), 2);
    assert_eq!(db("rediss://u:pw@h:1?db=3"), 3);
    assert_eq!(db("redis+unix:///tmp/r.sock?db=4&user=u&pass=pw"), 4);
    assert_eq!(
        Master::parse("redis://h:1?db=2").unwrap().to_string(),
        "redis://h:1/2"
    );
}

#[test]
fn a_query_redlock_does_not_read_is_refused() {
    for (url, why) in [
        ("redis://h:1/2?db=3", "two databases, /2 and ?db=3"),
        ("redis://h:1?db=0&db=1", "two databases, ?db=0 and ?db=1"),
        ("redis://h:1?db=x", "?db= takes a database number"),
        ("redis://h:1?db=-1", "0 or more"),
        ("redis://h:1?timeout=1", "\"timeout\" is not understood"),
        ("redis://h:1?protocol=3", "\"protocol\" is not understood"),
        ("redis://h:1?user=u", "\"user\" is not understood"),
        ("redis+unix:///s?protocol=3", "?db=, ?user= and ?pass="),
        ("redis+cluster://h:1?db=1", "database 0"),
        ("redis://h:1?topsecret", "a query parameter is not"),
        ("redis://h:1?password=topsecret", "--password-file"),
    ] {
        let err = Master::parse(url).unwrap_err();
        assert!(err.reason.contains(why), "{url}: {err}");
        assert!(!err.to_string().contains("topsecret"), "{err}");
    }
}

#[test]
fn an_ipv6_host_is_shown_in_brackets() {
    for (url, shown) in [
        ("redis://[::1]:25005", "redis://[::1]:25005"),
        (
            "rediss://u:pw@[2001:DB8::1]:6380/2",
            "rediss://u:***@[2001:db8::1]:6380/2",
        ),
        ("redis://127.0.0.1:1", "redis://127.0.0.1:1"),
    ] {
        assert_eq!(Master::parse(url).unwrap().to_string(), shown, "{url}");
    }
}
