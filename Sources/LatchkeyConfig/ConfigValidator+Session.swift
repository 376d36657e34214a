extension ConfigValidator {
    /// `inbound.session`: the key files exist (the key itself is read and checked for
    /// privacy by `serve` and `login-link`, which use it), lifetimes are positive.
    mutating func validateSession(_ raw: ConfigMapping) -> SessionSettings? {
        let path = raw.path
        let expected = "a private file holding the base64 of 32 random bytes (openssl rand -base64 32)"
        guard let rawKey = raw.string("key_file") else {
            diagnostics.error(path, "missing key 'key_file'", expected: expected)
            return nil
        }
        guard let keyFile = storePath(rawKey, at: path / "key_file", expected: expected) else { return nil }
        checkReadableFile(keyFile, at: path / "key_file")
        var previous: [String] = []
        for (index, file) in raw.strings("previous_key_files") ?? [] {
            guard let resolved = storePath(file, at: (path / "previous_key_files")[index], expected: expected) else { continue }
            checkReadableFile(resolved, at: (path / "previous_key_files")[index])
            previous.append(resolved)
        }
        var settings = SessionSettings(keyFile: keyFile, previousKeyFiles: previous)
        if let lifetime = positiveDuration(raw, "lifetime") { settings.lifetime = lifetime }
        if let lifetime = positiveDuration(raw, "link_lifetime") { settings.linkLifetime = lifetime }
        return settings
    }
}
