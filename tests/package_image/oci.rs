//! The image as a container runtime sees it: the archive read as an OCI image layout (every
//! blob checked against its digest and size), and containers of it, unpacked by umoci into
//! runtime bundles and run by runc.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::{run, succeed};

/// The image under test: the archive scripts/package had scripts/image write.
pub fn image_archive() -> PathBuf {
    crate::artifacts().image.clone()
}

/// The archive extracted (an OCI image layout) and the documents it holds.
pub struct Image {
    pub archive: PathBuf,
    pub layout: PathBuf,
    /// index.json's one entry: the manifest's descriptor.
    pub descriptor: Value,
    pub manifest: Value,
    pub config: Value,
    /// The one layer's blob (a gzipped tar).
    pub layer: PathBuf,
}

pub fn image() -> &'static Image {
    static IMAGE: OnceLock<Image> = OnceLock::new();
    IMAGE.get_or_init(|| Image::read(image_archive(), "image-layout"))
}

/// The arm64 image scripts/package made.
pub fn arm64_image() -> &'static Image {
    static IMAGE: OnceLock<Image> = OnceLock::new();
    IMAGE.get_or_init(|| Image::read(crate::artifacts().arm_image.clone(), "arm64-image-layout"))
}

impl Image {
    /// `archive` extracted into `dir` (under the tests' temporary directory) and checked.
    fn read(archive: PathBuf, dir: &str) -> Image {
        assert!(
            archive.is_file(),
            "no image at {}: build it with scripts/package (or scripts/image STATIC-BINARY DIR)",
            archive.display()
        );
        let layout = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
        let _ = std::fs::remove_dir_all(&layout);
        std::fs::create_dir_all(&layout).unwrap();
        run(Command::new("tar")
            .arg("-xf")
            .arg(&archive)
            .arg("-C")
            .arg(&layout));
        let index = json_file(&layout.join("index.json"));
        let descriptors = index["manifests"]
            .as_array()
            .expect("index.json: manifests");
        assert_eq!(descriptors.len(), 1, "one image in the archive: {index}");
        let descriptor = descriptors[0].clone();
        let manifest = blob_json(&layout, &descriptor);
        let config = blob_json(&layout, &manifest["config"]);
        let layers = manifest["layers"].as_array().expect("manifest: layers");
        assert_eq!(layers.len(), 1, "one layer: {manifest}");
        let layer = blob_path(&layout, &layers[0]);
        Image {
            archive,
            layout,
            descriptor,
            manifest,
            config,
            layer,
        }
    }
}

pub fn json_file(path: &Path) -> Value {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The blob a descriptor names, checked to be what the descriptor says: its sha256 and size.
pub fn blob_path(layout: &Path, descriptor: &Value) -> PathBuf {
    let digest = descriptor["digest"].as_str().expect("a digest");
    let hex = digest.strip_prefix("sha256:").expect(digest);
    let path = layout.join("blobs/sha256").join(hex);
    let sum = run(Command::new("sha256sum").arg(&path));
    assert_eq!(
        sum.split_whitespace().next(),
        Some(hex),
        "{}",
        path.display()
    );
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(Some(size), descriptor["size"].as_u64(), "{descriptor}");
    path
}

pub fn blob_json(layout: &Path, descriptor: &Value) -> Value {
    json_file(&blob_path(layout, descriptor))
}

/// The image's name in the archive.
pub fn tag() -> String {
    format!("redlock:{}", env!("CARGO_PKG_VERSION"))
}

/// The image's entrypoint, which umoci puts before a container's arguments.
pub fn entrypoint() -> Vec<String> {
    let config = &image().config["config"];
    serde_json::from_value(config["Entrypoint"].clone()).expect("an entrypoint")
}

/// A container of the image, in a runtime bundle of its own, as a runtime would make it
/// (umoci turns the image's configuration into the bundle's config.json), then set up as
/// `docker run --network=host --read-only IMAGE ARGS` would: the host's network, no terminal,
/// a read-only root, explicit nofile and nproc limits, and `binds` mounted read-only.
pub struct Container {
    pub id: String,
    bundle: PathBuf,
    _dir: TempDir,
}

impl Container {
    /// `args`: the container's arguments, split at spaces.
    pub fn new(args: &str, binds: &[(&Path, &str)]) -> Container {
        Container::of(image(), args, binds)
    }

    /// A container of `image` (the host's or the arm64 one).
    pub fn of(image: &Image, args: &str, binds: &[(&Path, &str)]) -> Container {
        // runc runs containers as root here: a container of a non-root user needs the
        // privilege to switch to that user.
        // SAFETY: geteuid cannot fail and has no preconditions.
        let euid = unsafe { libc::geteuid() };
        assert_eq!(
            euid, 0,
            "the image tests run containers with runc: run them as root"
        );
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let id = format!(
            "redlock-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("bundle");
        let tag = tag();
        succeed(
            Command::new("umoci")
                .arg("unpack")
                .arg("--image")
                .arg(format!("{}:{tag}", image.layout.display()))
                .arg(&bundle),
        )
        .unwrap_or_else(|why| panic!("{why}\n(umoci is in Debian's package umoci)"));
        let path = bundle.join("config.json");
        let mut config = json_file(&path);
        let mut argv: Vec<String> =
            serde_json::from_value(image.config["config"]["Entrypoint"].clone())
                .expect("an entrypoint");
        argv.extend(args.split_whitespace().map(str::to_string));
        config["process"]["args"] = json!(argv);
        config["process"]["terminal"] = json!(false);
        config["process"]["rlimits"] = json!([
            {"type": "RLIMIT_NOFILE", "soft": 1024, "hard": 1024},
            {"type": "RLIMIT_NPROC", "soft": 4096, "hard": 4096},
        ]);
        config["root"]["readonly"] = json!(true);
        let namespaces = config["linux"]["namespaces"].as_array_mut().unwrap();
        namespaces.retain(|namespace| namespace["type"] != "network");
        let mounts = config["mounts"].as_array_mut().unwrap();
        for (source, destination) in binds {
            mounts.push(json!({
                "destination": destination,
                "type": "bind",
                "source": source,
                "options": ["rbind", "ro"],
            }));
        }
        std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
        Container {
            id,
            bundle,
            _dir: dir,
        }
    }

    /// `runc run`, in the foreground: its exit status is the container's.
    pub fn command(&self) -> Command {
        let mut command = Command::new("runc");
        command
            .arg("run")
            .arg("--bundle")
            .arg(&self.bundle)
            .arg(&self.id)
            .stdin(Stdio::null());
        command
    }

    pub fn output(&self) -> std::process::Output {
        self.command()
            .output()
            .unwrap_or_else(|e| panic!("runc: {e} (install Debian's package runc)"))
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("runc")
            .args(["delete", "--force", &self.id])
            .output();
    }
}
