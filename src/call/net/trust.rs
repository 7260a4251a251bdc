//! Which certificate authorities vidprep trusts for https, the same for its own requests
//! (`net::remote`: the first contact, range checks, downloads) and for FFmpeg's reads of a
//! URL (`media::source::url_recipe`): the ones the system trusts, as Python's `ssl` and curl
//! find them.
//!
//! - `SSL_CERT_FILE`, when set: that PEM bundle only (it must exist).
//! - `SSL_CERT_DIR`, when set: every PEM certificate in those folders (`:`-separated), besides
//!   the bundle. FFmpeg takes one file: it is given the bundle and the folders' certificates
//!   joined into one file in the temporary folder, named by its content's hash (written once,
//!   atomically; the same trust reuses it).
//! - Otherwise the system's bundle: the first of the well-known places that exists (Debian and
//!   Ubuntu, Fedora and RHEL, openSUSE, Alpine, Arch; the list Go's `crypto/x509` searches).
//! - With none of these, vidprep's own requests fall back to Mozilla's roots (compiled in),
//!   and FFmpeg to its TLS library's system trust.
//!
//! FFmpeg's https does not verify the server's certificate unless asked (`tls_verify`): vidprep
//! always asks, so a server whose certificate the trusted authorities did not sign is refused
//! rather than read.

use std::path::{Path, PathBuf};

/// The system bundles, in the order they are looked for.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Gentoo, Arch
    "/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL
    "/etc/ssl/ca-bundle.pem",             // openSUSE
    "/etc/pki/tls/cacert.pem",            // OpenELEC
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
    "/etc/ssl/cert.pem",                  // Alpine, macOS
];

/// Where the trusted authorities come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trust {
    /// The one PEM bundle FFmpeg is given (`ca_file`), and vidprep's requests read.
    pub bundle: Option<PathBuf>,
    /// Folders of PEM certificates vidprep's requests read too (`SSL_CERT_DIR`).
    pub dirs: Vec<PathBuf>,
    /// Whether the bundle was named by `SSL_CERT_FILE` (then it is the only source).
    pub from_env: bool,
}

impl Trust {
    /// The trust of a call with `settings`: their `SSL_CERT_FILE` and `SSL_CERT_DIR` (a door
    /// fills them from its environment), and the system's files.
    pub fn of(settings: &crate::call::settings::Settings) -> Trust {
        Trust::from_parts(
            settings.ssl_cert_file.clone(),
            settings.ssl_cert_dir.clone().map(Into::into),
            |p| p.is_file(),
        )
    }

    /// [`Trust::of`] from its inputs (`exists` tells whether a system bundle is there).
    fn from_parts(
        cert_file: Option<PathBuf>,
        cert_dir: Option<std::ffi::OsString>,
        exists: impl Fn(&Path) -> bool,
    ) -> Trust {
        let dirs: Vec<PathBuf> = cert_dir
            .as_deref()
            .map(|d| {
                std::env::split_paths(d)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(file) = cert_file.filter(|f| !f.as_os_str().is_empty()) {
            return Trust {
                bundle: Some(file),
                dirs,
                from_env: true,
            };
        }
        let bundle = SYSTEM_BUNDLES
            .iter()
            .map(Path::new)
            .find(|p| exists(p))
            .map(Path::to_path_buf);
        Trust {
            bundle,
            dirs,
            from_env: false,
        }
    }

    /// FFmpeg's options for an https URL: verify the server (`tls_verify`), against the bundle
    /// (`ca_file`) where there is one.
    pub fn ffmpeg_options(&self) -> Vec<(String, String)> {
        let mut options = vec![("tls_verify".to_string(), "1".to_string())];
        let file = if self.dirs.is_empty() {
            self.bundle.clone()
        } else {
            self.joined_bundle().or_else(|| self.bundle.clone())
        };
        if let Some(file) = file {
            options.push(("ca_file".into(), file.display().to_string()));
        }
        options
    }

    /// The bundle and every certificate file of the folders as one PEM file (see the module
    /// doc), or `None` when it cannot be written.
    fn joined_bundle(&self) -> Option<PathBuf> {
        use md5::{Digest, Md5};
        let mut pem = self
            .bundle
            .as_ref()
            .and_then(|b| std::fs::read(b).ok())
            .unwrap_or_default();
        for file in self.dir_files() {
            if let Ok(bytes) = std::fs::read(&file) {
                if !pem_certificates(&bytes).is_empty() {
                    pem.push(b'\n');
                    pem.extend_from_slice(&bytes);
                }
            }
        }
        let hash: String = Md5::digest(&pem)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let path = std::env::temp_dir().join(format!("vidprep-ca-{hash}.pem"));
        if !path.is_file() {
            let mut tmp = tempfile::NamedTempFile::new_in(std::env::temp_dir()).ok()?;
            std::io::Write::write_all(&mut tmp, &pem).ok()?;
            tmp.persist(&path).ok()?;
        }
        Some(path)
    }

    /// The files of the `SSL_CERT_DIR` folders, each folder's in name order.
    fn dir_files(&self) -> Vec<PathBuf> {
        let mut all = Vec::new();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            all.extend(files);
        }
        all
    }

    /// The root certificates for vidprep's own requests: those of the bundle and the folders,
    /// or `None` for Mozilla's compiled-in roots when there are none. An unreadable
    /// `SSL_CERT_FILE`, or one without a certificate, is an error naming it.
    pub fn root_certs(&self) -> Result<Option<ureq::tls::RootCerts>, String> {
        let mut certs = Vec::new();
        if let Some(bundle) = &self.bundle {
            match std::fs::read(bundle) {
                Ok(pem) => certs.extend(pem_certificates(&pem)),
                Err(e) if self.from_env => {
                    return Err(format!(
                        "cannot read SSL_CERT_FILE {} ({e}): point it at a PEM bundle of \
                         certificate authorities, or unset it to use the system's",
                        bundle.display()
                    ))
                }
                Err(_) => {}
            }
            if self.from_env && certs.is_empty() {
                return Err(format!(
                    "SSL_CERT_FILE {} holds no PEM certificate: point it at a PEM bundle of \
                     certificate authorities, or unset it to use the system's",
                    bundle.display()
                ));
            }
        }
        for file in self.dir_files() {
            if let Ok(pem) = std::fs::read(&file) {
                certs.extend(pem_certificates(&pem));
            }
        }
        Ok((!certs.is_empty()).then(|| ureq::tls::RootCerts::new_with_certs(&certs)))
    }
}

/// The certificates of a PEM text (other items and damaged ones are skipped).
fn pem_certificates(pem: &[u8]) -> Vec<ureq::tls::Certificate<'static>> {
    ureq::tls::parse_pem(pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssl_cert_file_wins_and_is_the_only_source() {
        let t = Trust::from_parts(Some("/x/ca.pem".into()), None, |_| true);
        assert_eq!(t.bundle.as_deref(), Some(Path::new("/x/ca.pem")));
        assert!(t.from_env);
        assert_eq!(
            t.ffmpeg_options(),
            vec![
                ("tls_verify".to_string(), "1".to_string()),
                ("ca_file".to_string(), "/x/ca.pem".to_string())
            ]
        );
    }

    #[test]
    fn the_first_system_bundle_that_exists_is_used() {
        let t = Trust::from_parts(None, None, |p| p == Path::new("/etc/ssl/ca-bundle.pem"));
        assert_eq!(
            t.bundle.as_deref(),
            Some(Path::new("/etc/ssl/ca-bundle.pem"))
        );
        assert!(!t.from_env);
        let none = Trust::from_parts(Some("".into()), None, |_| false);
        assert_eq!(none.bundle, None);
        // Still verified, against the TLS library's own system trust.
        assert_eq!(
            none.ffmpeg_options(),
            vec![("tls_verify".to_string(), "1".to_string())]
        );
        assert!(none.root_certs().unwrap().is_none());
    }

    #[test]
    fn ssl_cert_dir_lists_folders() {
        let t = Trust::from_parts(None, Some("/a:/b".into()), |_| false);
        assert_eq!(t.dirs, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
    }

    #[test]
    fn a_bad_ssl_cert_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let e = Trust::from_parts(Some(missing.clone()), None, |_| false)
            .root_certs()
            .unwrap_err();
        assert!(e.contains("SSL_CERT_FILE") && e.contains("nope.pem"), "{e}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = Trust::from_parts(Some(empty), None, |_| false)
            .root_certs()
            .unwrap_err();
        assert!(e.contains("holds no PEM certificate"), "{e}");
    }
}
