/// `grant: recipe`: an identity whose credential is made by a list of HTTP steps, such as
/// TheMovieDB's session (a request token, its validation with the user's login, then a
/// session id). The result is the set of values the steps captured.
public struct Recipe: Sendable, Equatable {
    /// What a relative step URL is resolved against (`base_url`); nil when every step's
    /// URL is absolute.
    public var baseURL: String?
    /// The recipe's own secrets, `{secrets.NAME}` in templates (a password, a username).
    public var secrets: [RecipeSecret]
    /// The entries of `credentials:` its templates name, `{credentials.NAME}`, copied here
    /// by the validator so that an identity carries every secret it needs.
    public var credentials: [RecipeSecret]
    /// Values a person types when the recipe runs (`{prompts.NAME}`, a one-time code):
    /// such a recipe runs only in `latchkey login`.
    public var prompts: [RecipePrompt]
    public var steps: [RecipeStep]
    /// The step `latchkey logout` runs with the stored captures (TMDB's
    /// `DELETE authentication/session`), before they are forgotten.
    public var logout: RecipeStep?
    public var expiry: RecipeExpiry

    public init(
        baseURL: String? = nil, secrets: [RecipeSecret] = [], credentials: [RecipeSecret] = [], prompts: [RecipePrompt] = [],
        steps: [RecipeStep], logout: RecipeStep? = nil, expiry: RecipeExpiry = .never
    ) {
        self.baseURL = baseURL
        self.secrets = secrets
        self.credentials = credentials
        self.prompts = prompts
        self.steps = steps
        self.logout = logout
        self.expiry = expiry
    }

    /// Every capture of the recipe's steps, in the order they are made.
    public var captures: [RecipeCapture] { steps.flatMap(\.captures) }

    /// The capture that is the identity's token (`{token}` in a route's template, what
    /// `latchkey token` prints): the last one the recipe makes. The validator requires one.
    public var tokenCapture: String? { captures.last?.name }
}

/// A named secret of a recipe.
public struct RecipeSecret: Sendable, Equatable {
    public var name: String
    public var source: SecretSource

    public init(name: String, source: SecretSource) {
        self.name = name
        self.source = source
    }
}

/// A value read from the terminal by `latchkey login`, with the text that asks for it.
public struct RecipePrompt: Sendable, Equatable {
    public var name: String
    public var text: String

    public init(name: String, text: String) {
        self.name = name
        self.text = text
    }
}

/// When a recipe's result stops being good.
public enum RecipeExpiry: Sendable, Equatable {
    /// Used until an upstream refuses it (`renew_on`).
    case never
    /// `lifetime`: this long after the recipe ran.
    case lifetime(Duration)
    /// `expires_in`: the named capture holds seconds from when the recipe ran.
    case capturedSeconds(String)
    /// `expires_at`: the named capture holds a time (RFC 3339, `YYYY-MM-DD HH:MM:SS UTC`
    /// as TMDB writes it, or Unix seconds).
    case capturedTime(String)
}

/// One HTTP call of a recipe: its request, what its answer must be, and what is taken from it.
public struct RecipeStep: Sendable, Equatable {
    public var name: String
    public var request: RecipeRequest
    public var expect: RecipeExpectation
    public var captures: [RecipeCapture]

    public init(name: String, request: RecipeRequest, expect: RecipeExpectation = .init(), captures: [RecipeCapture] = []) {
        self.name = name
        self.request = request
        self.expect = expect
        self.captures = captures
    }
}

public struct RecipeRequest: Sendable, Equatable {
    public enum Body: Sendable, Equatable {
        case none
        /// `application/x-www-form-urlencoded`.
        case form([RecipeField])
        /// `application/json`.
        case json(RecipeJSONBody)
    }

    /// Upper case, e.g. GET, POST, DELETE.
    public var method: String
    /// Absolute, or relative to the recipe's `base_url`.
    public var url: RecipeTemplate
    public var query: [RecipeField]
    public var headers: [RecipeField]
    public var body: Body

    public init(method: String, url: RecipeTemplate, query: [RecipeField] = [], headers: [RecipeField] = [], body: Body = .none) {
        self.method = method
        self.url = url
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// A query parameter, header or form field whose value is a template.
public struct RecipeField: Sendable, Equatable {
    public var name: String
    public var value: RecipeTemplate

    public init(name: String, value: RecipeTemplate) {
        self.name = name
        self.value = value
    }
}

/// A JSON request body as configured: its strings are templates, everything else literal.
public indirect enum RecipeJSONBody: Sendable, Equatable {
    case string(RecipeTemplate)
    /// An unquoted scalar that is no string: a number, boolean or null (a timestamp or a
    /// scalar with a tag of its own is its text, as a string). Never an array or object:
    /// lists and mappings nest as `array` and `object`.
    case literal(JSONValue)
    case array([RecipeJSONBody])
    /// Members in the configuration's order.
    case object([(name: String, value: RecipeJSONBody)])

    public static func == (lhs: RecipeJSONBody, rhs: RecipeJSONBody) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a == b
        case (.literal(let a), .literal(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.name == $1.name && $0.value == $1.value }
        default: false
        }
    }
}

/// What a step's answer must be for the recipe to go on.
public struct RecipeExpectation: Sendable, Equatable {
    /// Accepted statuses; empty: any 2xx.
    public var statuses: Set<Int>
    /// JSON fields that must hold these values (TMDB: `success: true`).
    public var fields: [JSONFieldMatch]

    public init(statuses: Set<Int> = [], fields: [JSONFieldMatch] = []) {
        self.statuses = statuses
        self.fields = fields
    }

    public func accepts(status: Int) -> Bool {
        statuses.isEmpty ? (200..<300).contains(status) : statuses.contains(status)
    }
}

/// A value taken from a step's answer, by name, for later steps, routes and `latchkey token`.
public struct RecipeCapture: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// A JSON body's value at a path; a string, number or boolean.
        case json(JSONPath)
        /// A response header's value.
        case header(String)
        /// The value of a cookie the answer sets.
        case cookie(String)
    }

    public var name: String
    public var source: Source
    /// Secret unless configured `secret: false`: a secret capture never reaches logs,
    /// errors, metrics or `status`.
    public var secret: Bool

    public init(name: String, source: Source, secret: Bool = true) {
        self.name = name
        self.source = source
        self.secret = secret
    }
}
