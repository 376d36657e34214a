import LatchkeyConfig

extension TokenStoreSettings {
    /// The store's directory. The XDG Base Directory Specification: `$XDG_STATE_HOME`
    /// when set to an absolute path (a relative one is invalid and ignored), else
    /// `$HOME/.local/state`.
    public func resolvedDirectory(environment: [String: String]) throws(TokenStoreError) -> String {
        if let directory { return directory }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/latchkey" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/latchkey" }
        throw TokenStoreError(.unusablePath, "cannot find the token store's directory: neither XDG_STATE_HOME nor HOME is an absolute path; "
            + "set store.path in the configuration")
    }
}
