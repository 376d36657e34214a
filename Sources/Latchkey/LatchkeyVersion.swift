/// Latchkey's version, in Semantic Versioning 2.0.0 form (MAJOR.MINOR.PATCH). The one
/// place it is written: `latchkey --version` prints it, and pages that show the running
/// build read it from here.
public enum LatchkeyVersion {
    public static let current = "0.10.0"
}
