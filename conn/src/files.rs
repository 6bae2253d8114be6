//! Reading the PEM files the TLS flags name.

/// Reads `path`, the file of `flag`, with an error naming both.
pub(crate) fn read_file(path: &std::path::Path, flag: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {flag} {}: {e}", path.display()))
}
