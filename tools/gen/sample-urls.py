#!/usr/bin/env python3
# Generates data/sample/urls.txt: 300 synthetic URLs on www.example.com that
# exercise the rules of data/sample/robots.txt (both verdicts for every
# group), plus 2 empty lines and 2 lines that are not URLs.
#
# Deterministic (no randomness); run from the repository root:
#
#     python3 tools/gen/sample-urls.py > data/sample/urls.txt

HOST = "https://www.example.com"

# Hand-picked paths that hit each rule of the sample, and its edges.
FIXED = [
    "/",
    "/index.html",
    "/robots.txt",
    "/robots.txt?v=2",
    "/sitemap.xml",
    "/about",
    "/about/team",
    "/admin/",
    "/admin/login",
    "/admin/public/logo.png",
    "/admin/public/",
    "/cart",
    "/cart/add?id=12",
    "/carts-of-the-world",
    "/checkout/step1",
    "/checkout",
    "/search",
    "/search?q=shoes",
    "/search/about",
    "/search/about/contact",
    "/private/",
    "/private/index.html",
    "/private/notes.txt",
    "/private",
    "/tmp/style.css",
    "/tmp/style.css?v=3",
    "/tmp/theme/dark.css",
    "/tmp/cache.bin",
    "/data/feed.json",
    "/data/feed.json?page=2",
    "/data/feed.jsonl",
    "/caf%C3%A9/menu",
    "/caf%c3%a9/menu",
    "/caf\u00e9/menu",
    "/caf%C3%A9/about",
    "/~staff/",
    "/%7Estaff/",
    "/%7estaff/list",
    "/api/v1/users",
    "/api/v1/",
    "/api/v2/users",
    "/api/",
    "/archive/",
    "/archive/2019/drafts/x",
    "/archive/1999/drafts/x",
    "/archive/2021/posts/y",
    "/blog/",
    "/blog",
    "/blog/2024/hello",
    "/blog/2024/hello/comments",
    "/docs/manual.pdf",
    "/docs/manual.pdf?download=1",
    "/docs/manual.PDF",
    "/products/shoe-42?sessionid=abc123",
    "/products/shoe-42?ref=home&sessionid=abc123",
    "/products/shoe-42?session=abc123",
    "/page#fragment",
    "/search#results",
    "/a%20b",
    "/a b",
]

CATEGORIES = ["shoes", "hats", "bags", "coats", "socks", "belts"]
SLUGS = ["hello-world", "release-notes", "caf\u00e9-guide", "q%26a"]
DOCS = ["guide", "faq", "terms", "price-list"]
DOC_EXTS = ["pdf", "html", "json", "txt"]


def generated():
    for cat in CATEGORIES:
        for n in range(1, 13):
            path = f"/products/{cat}/{n * 7}"
            if n % 3 == 0:
                path += f"?sessionid=s{n:03d}"
            elif n % 4 == 0:
                path += f"?color=red&page={n}"
            yield path
    for year in (2019, 2021, 2023, 2024):
        for slug in SLUGS:
            yield f"/blog/{year}/{slug}"
            yield f"/blog/{year}/{slug}/comments"
            yield f"/blog/{year}/{slug}/comments?page=2"
    for doc in DOCS:
        for ext in DOC_EXTS:
            yield f"/docs/{doc}.{ext}"
            yield f"/docs/{doc}.{ext}?lang=en"
    for year in (1998, 2005, 2016, 2020, 2023, 2025):
        for kind in ("drafts", "posts"):
            for n in (1, 2):
                yield f"/archive/{year}/{kind}/{n}"
    for area in ("admin", "private", "tmp", "api/v1", "api/v2", "search"):
        for leaf in (
            "",
            "index.html",
            "index.htm",
            "report.css",
            "data.json",
            "a.pdf",
        ):
            yield f"/{area}/{leaf}"
    n = 0
    while True:
        n += 1
        yield f"/catalog/page-{n}?sort=price"


def main():
    paths = list(FIXED)
    gen = generated()
    while len(paths) < 300:
        path = next(gen)
        if path not in paths:
            paths.append(path)
    lines = [HOST + p for p in paths]
    # Lines the CLI must count as empty or invalid, not filter.
    lines.insert(40, "")
    lines.insert(120, "not a url")
    lines.insert(200, "")
    lines.insert(260, "::::")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
