import LatchkeyConfig

extension Recipe {
    /// The names of the captures `token` holds, in the recipe's order: what `status` and
    /// `latchkey login` may show of a result, never the values, which may be secret.
    public func heldCaptureNames(in token: TokenSet) -> [String] {
        captures.map(\.name).filter { token.captures[$0] != nil }
    }
}
