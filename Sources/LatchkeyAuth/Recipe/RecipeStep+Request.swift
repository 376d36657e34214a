import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyUpstream

extension RecipeStep {
    /// The step's absolute URL: its template rendered with every value percent-encoded
    /// (a capture holding `/` stays one path segment), resolved against `baseURL`. The
    /// query comes from `query:`, in `httpRequest`.
    func url(baseURL: String?, values: RecipeValues) throws(RecipeStepFailure) -> String {
        let reference: String
        do {
            reference = try values.render(request.url, encoding: FormEncoding.percentEncode)
        } catch {
            throw .missing(error)
        }
        guard let url = RecipeURL.resolve(reference, against: baseURL) else { throw .invalidURL }
        return url
    }

    /// How messages name the step: `POST https://host/path/{name}`, its URL as configured
    /// and resolved against `base_url`, with its placeholders as written and without the
    /// query. Never a rendered value: a secret in the path, percent-encoded, would slip
    /// past the masking of secrets.
    func shownRequest(baseURL: String?) -> String {
        let template = request.url.description
        let url = RecipeURL.resolve(template, against: baseURL) ?? template
        return request.method + " " + RecipeURL.withoutQuery(url)
    }

    /// The request to send to `url` (from `url(baseURL:values:)`): the query parameters
    /// added to it urlencoded, the headers, and a form or JSON body with its
    /// `Content-Type`. A step that reads JSON asks for it with `Accept` unless its headers
    /// say otherwise.
    func httpRequest(url: String, values: RecipeValues, options: UpstreamOptions) throws(RecipeStepFailure) -> AuthHTTPRequest {
        let query: [(String, String)], headers: [(String, String)], body: [UInt8]
        var fields = HTTPFields()
        do throws(RecipeValues.Missing) {
            query = try render(request.query, values)
            headers = try render(request.headers, values)
            switch request.body {
            case .none:
                body = []
            case .form(let form):
                fields.append(name: "Content-Type", value: OAuthFormPost.contentType)
                body = Array(FormEncoding.encode(try render(form, values)).utf8)
            case .json(let json):
                fields.append(name: "Content-Type", value: "application/json")
                body = try json.rendered(values)
            }
        } catch {
            throw .missing(error)
        }
        for (name, value) in headers {
            // RFC 9110 §5.5: a field value never holds CR, LF or NUL; a capture could.
            guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else { throw .invalidHeader(name: name) }
            fields.set(name: HTTPField.Name(name), value: value)
        }
        if readsJSON, !fields.contains("Accept") { fields.append(name: "Accept", value: "application/json") }
        // A fragment is the client's own (RFC 3986 §3.5): it is not sent.
        let target = FormEncoding.appending(query, toQueryOf: String(url.prefix { $0 != "#" }))
        return AuthHTTPRequest(method: request.method, url: target, fields: fields, body: body, options: options)
    }

    private func render(_ fields: [RecipeField], _ values: RecipeValues) throws(RecipeValues.Missing) -> [(String, String)] {
        var rendered: [(String, String)] = []
        for field in fields { rendered.append((field.name, try values.render(field.value))) }
        return rendered
    }
}
