import ThumbnailCore

/// Astro's image endpoint query, `/_image?href=&w=&h=&q=&f=&fit=&position=`, as an external image
/// service's `getURL` writes it (examples/ has one): `href` an absolute URL or a path (`/_astro/…`,
/// resolved against `--source-base-url`), `q` a number or Astro's presets (low 25, mid 50, high
/// 80, max 100), `f` the output format. Anything else is a 400 naming it.
enum AstroQuery {
    /// Every parameter it takes, in openapi.yaml's order.
    static let parameters = ["href", "w", "h", "q", "f", "fit", "position"]
    static let qualityPresets = ["low": "25", "mid": "50", "high": "80", "max": "100"]

    static func parse(_ query: [(name: String, value: String?)], frontends: Frontends) throws(ThumbnailError)
        -> ThumbnailRequest
    {
        var translation = ThumbTranslation(sourceName: "href")
        let sources = query.filter { $0.name == "href" }
        if sources.count > 1 {
            translation.refuse("href", "must not be repeated")
        } else if let text = sources.first?.value, !text.isEmpty {
            translation.setSource(frontends.source(text, name: "href"))
        } else if sources.isEmpty {
            translation.setSource(nil)
        } else {
            translation.refuse("href", "must not be empty")
        }
        for (name, value) in query where name != "href" {
            switch name {
            case "w", "h": translation.add(name, value, as: name)
            case "q": translation.add("q", value.flatMap { qualityPresets[$0] } ?? value, as: "q")
            case "f": translation.addFormat(value, as: "f")
            case "fit": translation.addFit(value, as: "fit", others: "contain, outside, none or scale-down")
            case "position": translation.addCrop(value, as: "position")
            default:
                translation.refuse(name, "is not supported by thumbd")
            }
        }
        return try translation.request(policy: frontends.policy)
    }
}
