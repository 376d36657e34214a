import LatchkeyConfig

extension Recipe {
    /// The names of the captures that are secret (all but `secret: false`): they never
    /// reach logs, errors, metrics or `status`.
    var secretCaptures: Set<String> {
        Set(captures.filter(\.secret).map(\.name))
    }
}

extension IdentityConfig {
    /// Whether the identity's results hold values logs must mask beyond the credentials:
    /// a recipe with a secret capture.
    public var holdsSecretCaptures: Bool {
        guard case .recipe(let recipe) = grant else { return false }
        return !recipe.secretCaptures.isEmpty
    }
}
