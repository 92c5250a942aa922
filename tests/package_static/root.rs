//! An empty root for the static binary: a directory holding only `/redlock`, a static shell for
//! its commands (`/bin/busybox`, with `/bin/sh` a link to it), `/etc/hosts`,
//! `/etc/resolv.conf` and an empty `/tmp`; no /lib, no /usr, no /proc. Programs run in it
//! through `unshare --user --map-root-user --root=DIR` (util-linux): a user namespace in which
//! the caller is root, which may chroot, so that it works for an unprivileged user too where
//! the kernel allows user namespaces. The network namespace stays the host's: masters on
//! 127.0.0.1 are reached from inside. unshare execs the program without forking, so the child
//! a test spawns is redlock itself (its pid, its signals, its exit status), and with no pid
//! namespace a pid a command writes inside is the pid the test sees.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;

use crate::common::{self, describe};

/// The name /etc/hosts gives 127.0.0.1 in every root.
pub const HOSTS_NAME: &str = "master.hosts.redlock.test";

/// Where Debian's busybox-static installs its static busybox.
const BUSYBOX: &str = "/bin/busybox";

pub struct EmptyRoot {
    dir: TempDir,
}

impl EmptyRoot {
    /// A root holding `redlock` (a static build) and the rest; checks that a program runs in it.
    pub fn new(redlock: &Path) -> EmptyRoot {
        let busybox = Path::new(BUSYBOX);
        let static_shell = busybox.exists() && common::elf::linkage(busybox).is_static();
        assert!(
            static_shell,
            "{BUSYBOX} is missing or not static: the empty root needs a static shell; install \
             it with `sudo apt-get install -y busybox-static`"
        );
        let dir = tempfile::Builder::new()
            .prefix("redlock-root-")
            .tempdir()
            .unwrap();
        let root = EmptyRoot { dir };
        for (inner, mode) in [("bin", 0o755), ("etc", 0o755), ("tmp", 0o1777)] {
            let path = root.path(inner);
            std::fs::create_dir(&path).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        std::fs::copy(redlock, root.path("redlock")).unwrap();
        std::fs::copy(busybox, root.path("bin/busybox")).unwrap();
        std::os::unix::fs::symlink("busybox", root.path("bin/sh")).unwrap();
        root.write("etc/hosts", &format!("127.0.0.1 localhost {HOSTS_NAME}\n"));
        // A resolver where nothing answers, until a test writes its own: no name of a test
        // may leave the machine.
        root.write(
            "etc/resolv.conf",
            "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
        );
        let output = root.shell("exit 0").output().unwrap_or_else(|e| {
            panic!("unshare (util-linux) runs programs in the empty root: {e}; install util-linux")
        });
        assert!(
            output.status.success(),
            "unshare --user --map-root-user --root could not enter the empty root: it needs user \
             namespaces (sysctl user.max_user_namespaces > 0, and on Debian's older kernels \
             kernel.unprivileged_userns_clone=1), or root:\n{}",
            describe(&output)
        );
        root
    }

    /// The host's path of `inner` (a path inside the root, without the leading `/`).
    pub fn path(&self, inner: &str) -> PathBuf {
        self.dir.path().join(inner)
    }

    /// Writes `/inner` in the root (parent directories made), readable by all.
    pub fn write(&self, inner: &str, contents: &str) {
        let path = self.path(inner);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    pub fn remove(&self, inner: &str) {
        std::fs::remove_file(self.path(inner)).unwrap();
    }

    /// What the root's top level holds, sorted.
    pub fn top_level(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    /// `/redlock ARGS` in the root, with nothing of the test's environment but PATH=/bin
    /// (so no USER or LOGNAME either: the user's name comes from the root's files).
    pub fn redlock(&self, args: &[&str]) -> Command {
        let mut command = self.enter("/redlock");
        command.args(args);
        command
    }

    /// `sh -c SCRIPT` in the root, as [`EmptyRoot::redlock`] runs.
    pub fn shell(&self, script: &str) -> Command {
        let mut command = self.enter("/bin/sh");
        command.args(["-c", script]);
        command
    }

    fn enter(&self, program: &str) -> Command {
        let mut command = Command::new("unshare");
        command
            .args(["--user", "--map-root-user"])
            .arg(format!("--root={}", self.dir.path().display()))
            .arg(program)
            .env_clear()
            .env("PATH", "/bin")
            .stdin(Stdio::null());
        command
    }
}
