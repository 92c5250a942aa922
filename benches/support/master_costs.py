"""What a master's CPU is made of: one request, one command inside a script, a script's body,
a connection, a subscription (issue 35, item 3).

Drives one redis-server (started by benches/master_costs.sh) over raw sockets, one request at a
time and waiting for each reply, as redlock does, and reads the server's CPU from
/proc/PID/task/*/schedstat (time on a CPU, all its threads) around each batch. Prints one line
per measurement (the median of ROUNDS batches of CALLS requests each), in microseconds of the
master's CPU per request. No client library: RESP is written by hand so that nothing is sent
that the row does not name.
"""

import glob
import hashlib
import socket
import statistics
import sys

port, pid, calls, rounds = (int(arg) for arg in sys.argv[1:5])


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def master_cpu_us():
    return sum(int(open(f).read().split()[0]) for f in glob.glob(f"/proc/{pid}/task/*/schedstat")) / 1000


def connect():
    conn = socket.create_connection(("127.0.0.1", port))
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def reply(conn, lines=1):
    """Reads until `lines` CRLFs arrived (enough for the short replies measured here)."""
    data = b""
    while data.count(b"\r\n") < lines:
        chunk = conn.recv(65536)
        if not chunk:
            raise SystemExit("master_costs: the master closed the connection")
        data += chunk
    if data.startswith(b"-"):
        raise SystemExit(f"master_costs: the master answered {data[:200]!r}")
    return data


def per_call(one):
    """The master's CPU per call of `one` (a function doing one call), median of the rounds."""
    samples = []
    for _ in range(rounds):
        before = master_cpu_us()
        for _ in range(calls):
            one()
        samples.append((master_cpu_us() - before) / calls)
    return statistics.median(samples)


def load(body):
    conn = connect()
    conn.sendall(resp("SCRIPT", "LOAD", body))
    reply(conn)
    conn.close()
    return hashlib.sha1(body.encode()).hexdigest()


# A waiter's turn passes 15 keys and 8 arguments; the functions are the size of the queue's
# shared Lua compacted (benches/master_costs.sh passes it).
keys = [f"k{i}" for i in range(15)]
args = ["t" * 36, "10000", '{"host":"h","pid":1}', "12", '{"host":"h","pid":1}', "3000", "6000", "1"]
functions = open(sys.argv[5]).read()
bodies = {
    "return": "return 1",
    "functions": functions + "\nreturn 1",
    "16 EXISTS": "redis.call('EXISTS', KEYS[1])\n" * 16 + "return 1",
    "16 ZSCORE": "redis.call('ZSCORE', KEYS[3], ARGV[1])\n" * 16 + "return 1",
    "16 TIME": "redis.call('TIME')\n" * 16 + "return 1",
}
shas = {name: load(body) for name, body in bodies.items()}
conn = connect()


def request(payload, lines=1):
    def one():
        conn.sendall(payload)
        reply(conn, lines)

    return one


def connection(first=None, lines=1):
    def one():
        fresh = connect()
        if first:
            fresh.sendall(first)
            reply(fresh, lines)
        fresh.close()

    return one


def delivered():
    """A subscriber's connection and one PUBLISH that reaches it, as a waiter's notice does."""
    listener = connect()
    listener.sendall(resp("SUBSCRIBE", "wake"))
    reply(listener, 6)  # *3, subscribe, wake, :1
    conn.sendall(resp("PUBLISH", "wake", ""))
    reply(conn)
    reply(listener, 7)  # *3, message, wake, the empty payload
    listener.close()


rows = [
    ("PING on an open connection", request(resp("PING"))),
    ("EVALSHA of `return 1`, no keys", request(resp("EVALSHA", shas["return"], 0))),
    ("EVALSHA of `return 1`, 15 keys and 8 arguments", request(resp("EVALSHA", shas["return"], 15, *keys, *args))),
    ("EVALSHA of the queue's functions (%d bytes), 15 keys, 8 arguments" % len(bodies["functions"]),
     request(resp("EVALSHA", shas["functions"], 15, *keys, *args))),
    ("EVAL of the same, its body on the wire", request(resp("EVAL", bodies["functions"], 15, *keys, *args))),
    ("EVALSHA of a script running EXISTS 16 times", request(resp("EVALSHA", shas["16 EXISTS"], 15, *keys, *args))),
    ("EVALSHA of a script running ZSCORE 16 times", request(resp("EVALSHA", shas["16 ZSCORE"], 15, *keys, *args))),
    ("EVALSHA of a script running TIME 16 times", request(resp("EVALSHA", shas["16 TIME"], 15, *keys, *args))),
    ("a connection opened and closed, nothing sent", connection()),
    ("a connection opened, one PING, closed", connection(resp("PING"))),
    ("a subscription's connection, SUBSCRIBE, one PUBLISH delivered, closed", delivered),
]
for name, one in rows:
    print(f"master-cost us={per_call(one):.1f} what={name}")
