extension Config {
    public static func proxyAuthSecretName(listener: String) -> String { "proxy_auth:" + listener }
}
