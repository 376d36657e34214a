/// Text placed in an HTML page Latchkey writes itself (an error page, the login's redirect
/// page).
public enum HTMLText {
    /// The five characters that can end text or an attribute value, as entities.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
