#!/usr/bin/env python3
"""Where the CPU time of `redlock run -- true` goes, from a `perf script` of a profile taken with
DWARF call graphs (benches/startup.sh makes both): each sample of redlock's processes is put in
the first bucket whose rule its stack matches, in the order below, and the buckets are printed as
shares of all samples. Samples whose caller perf could not unwind (malloc, page faults) keep
their own buckets rather than being guessed at. Usage: where_time_goes.py PERF_SCRIPT_OUTPUT"""
import collections
import sys


def any_frame(frames, *needles):
    return any(needle in frame for frame in frames for needle in needles)


def clap(frames):
    return any((f.startswith(("clap_builder::", "<redlock_cli::cli::", "clap_lex"))
                or "CommandFactory" in f or "augment_" in f or "_do_parse" in f)
               and not f.startswith("map<") for f in frames)


LOADER = ("_dl_", "dl_main", "dl_platform_init", "init_cpu_features", "intel_check_word",
          "handle_intel", "get_common_indices", "get_extended_indices", "update_active",
          "__cpu_indicator_init")
RULES = [
    ("the command (true: exec, loader, exit)", lambda c, f: c == "true"),
    ("guard process (fork, wait, exit)", lambda c, f: any_frame(f, "guard", "_Fork", "arch_fork")),
    ("signal thread (create, run, exit)", lambda c, f: c == "redlock-signals"
     or any(x.startswith("clone3") for x in f) or any_frame(f, "signal_hook")),
    ("dynamic loader (map, relocate, bind, CPU features)", lambda c, f: any_frame(f, *LOADER)
     or any(x.startswith(("do_lookup_x", "check_match", "strcmp")) for x in f)),
    ("exec of redlock (kernel)", lambda c, f: any_frame(f, "execve", "load_elf_binary")),
    ("spawning the command (vfork, exec)", lambda c, f: any(x.startswith("clone (inlined)")
     for x in f) or any_frame(f, "posix_spawn", "__spawn")),
    ("network (socket, connect, send, epoll)", lambda c, f: any_frame(
        f, "__libc_send", "__libc_connect", "GI_socket", "epoll")),
    ("command line (clap: build and parse)", lambda c, f: clap(f)),
    ("configuration (files, environment)", lambda c, f: any_frame(f, "redlock_cli::config")),
    ("acquire (scripts, replies)", lambda c, f: any_frame(f, "take::take", "acquir")),
    ("release (scripts, replies)", lambda c, f: any_frame(f, "release")),
    ("supervision (waiting for the command)", lambda c, f: any_frame(f, "supervise")),
    ("runtime (tokio)", lambda c, f: any_frame(f, "tokio")),
    ("exit (unmap, close)", lambda c, f: any_frame(f, "exit")),
    ("malloc and free (caller not unwound)", lambda c, f: any(
        k in x for x in f[:3] for k in ("malloc", "_int_free", "cfree", "realloc", "memcpy",
                                        "memmove"))),
    ("page faults (caller not unwound)", lambda c, f: any_frame(f, "page_fault")),
]


def main(path):
    buckets = collections.Counter()
    total = 0
    for sample in open(path).read().split("\n\n"):
        lines = [line for line in sample.strip().split("\n") if line.strip()]
        if not lines:
            continue
        comm = lines[0].split()[0]
        if comm in ("sh", "seq"):  # the benchmark's own loop
            continue
        frames = [part[1] for part in (line.strip().split(None, 1) for line in lines[1:])
                  if len(part) == 2]
        total += 1
        name = next((name for name, rule in RULES if rule(comm, frames)), "other")
        buckets[name] += 1
    for name, count in buckets.most_common():
        print(f"{count / total * 100:5.1f}%  {name}")
    print(f"({total} samples)")


if __name__ == "__main__":
    main(sys.argv[1])
