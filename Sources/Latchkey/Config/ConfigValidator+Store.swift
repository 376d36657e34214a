extension ConfigValidator {
    mutating func validateStore(_ raw: RawStore?, at path: ConfigPath) -> TokenStoreSettings {
        var settings = TokenStoreSettings()
        guard let raw else { return settings }
        if let type = raw.type {
            if let kind = TokenStoreSettings.Kind(rawValue: type) {
                settings.kind = kind
            } else {
                // The paths are still checked, as a file store's.
                diagnostics.error(path / "type", "unknown store type", expected: "file (the default) or memory")
            }
        }
        if settings.kind == .memory {
            for (key, given) in [("path", raw.path != nil), ("key_file", raw.keyFile != nil)] where given {
                diagnostics.error(path / key, "not used by the memory store", expected: "type: file, or no \(key)")
            }
            return settings
        }
        settings.directory = storePath(raw.path, at: path / "path", expected: "the directory for the token files")
        settings.keyFile = storePath(raw.keyFile, at: path / "key_file", expected: "the file holding the store key")
        if let keyFile = settings.keyFile { checkReadableFile(keyFile, at: path / "key_file") }
        return settings
    }

    /// A path taken against the config file's directory. `~` is not a shell's: refused
    /// rather than taken as a directory named "~".
    mutating func storePath(_ raw: String?, at path: ConfigPath, expected: String) -> String? {
        guard let raw else { return nil }
        guard !raw.isEmpty, !raw.utf8.contains(0) else {
            diagnostics.error(path, raw.isEmpty ? "empty path" : "NUL in the path", expected: expected)
            return nil
        }
        guard !raw.hasPrefix("~") else {
            diagnostics.error(path, "'~' is not expanded", expected: "an absolute path, or one relative to the config file")
            return nil
        }
        return ConfigSyntax.resolve(raw, against: options.baseDirectory)
    }
}
