//! Unit tests of `lua`.

use super::*;

#[test]
fn the_sha_is_the_one_redis_names_the_script_by() {
    // `redis-cli SCRIPT LOAD "return 1"` answers this.
    let lua = Lua::new("return 1", 1);
    assert_eq!(lua.sha, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    // And redis-rs, which the tests' own clients use, agrees, for a script of many lines: the
    // SHA1 is the one of what is sent.
    let body = "local n = redis.call('INCR', KEYS[1])\nif n > 1 then\n  return n\nend\nreturn 0\n";
    let lua = Lua::new(body, 1);
    assert_eq!(lua.sha, redis::Script::new(lua.code).get_hash());
}

#[test]
fn compacting_drops_indentation_comments_and_blank_lines_only() {
    let source = "\n-- why\nlocal function f(x)\n  -- because\n  return x .. ' -- kept'\n\nend\n";
    assert_eq!(
        compact(source),
        "local function f(x)\nreturn x .. ' -- kept'\nend"
    );
}

#[test]
fn a_composed_script_takes_the_definitions_it_uses_and_theirs_in_order() {
    let library = r"
local function a()
  return 1
end
local B = 2
local function c()
  return a() + B
end
local function unused()
  return c()
end
local function d_e()
  return 3
end
";
    let lua = Lua::composed(&[library, "\nreturn c() + d_e()\n"], 1);
    assert_eq!(
        lua.code,
        "local function a()\nreturn 1\nend\nlocal B = 2\nlocal function c()\nreturn a() + B\n\
         end\nlocal function d_e()\nreturn 3\nend\nreturn c() + d_e()"
    );
    // A name is a whole word: `d` is not `d_e`, and a body using nothing takes nothing.
    assert_eq!(Lua::composed(&[library, "return 0"], 1).code, "return 0");
}
