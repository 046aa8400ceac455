#!/usr/bin/env python3
"""Writes data/agents/ai.tsv from ai.robots.txt's robots.json.

Usage: python3 data/agents/make-ai-tsv.py ROBOTS_JSON > data/agents/ai.tsv

ROBOTS_JSON is robots.json of https://github.com/ai-robots-txt/ai.robots.txt
(MIT). Each of its names that is an RFC 9309 product token becomes one line,
`TOKEN<TAB>CATEGORY<TAB>OPERATOR<TAB>SOURCE`; the others are listed on
stderr with the reason they are left out (see data/agents/README.md).

CATEGORY is one of `training`, `search`, `assistant`, `other`, read from
the entry's `function` field (below: FUNCTION_CATEGORY for ai.robots.txt's
categories, CATEGORY for its free-text functions and for the tokens whose
operator documents the purpose). OPERATOR is the entry's `operator` with
its Markdown link removed, or OPERATOR below where the field is unclear or
a sentence. SOURCE is the operator's own page that documents the token
where there is one (DOCS), else ai.robots.txt's robots.json.
"""

import json
import re
import sys

AI_ROBOTS = "https://github.com/ai-robots-txt/ai.robots.txt/blob/main/robots.json"

# The operators' own pages that name the token and say what it is for.
OPENAI = "https://platform.openai.com/docs/bots"
ANTHROPIC = (
    "https://support.claude.com/en/articles/8896518-does-anthropic-crawl-"
    "data-from-the-web-and-how-can-site-owners-block-the-crawler"
)
GOOGLE_COMMON = (
    "https://developers.google.com/search/docs/crawling-indexing/"
    "google-common-crawlers"
)
GOOGLE_SPECIAL = (
    "https://developers.google.com/search/docs/crawling-indexing/"
    "google-special-case-crawlers"
)
META = "https://developers.facebook.com/docs/sharing/webmasters/web-crawlers"
APPLE = "https://support.apple.com/en-us/119829"
DOCS = {
    "GPTBot": OPENAI,
    "OAI-SearchBot": OPENAI,
    "ChatGPT-User": OPENAI,
    "ClaudeBot": ANTHROPIC,
    "Claude-User": ANTHROPIC,
    "Claude-SearchBot": ANTHROPIC,
    "Google-Extended": GOOGLE_COMMON,
    "GoogleOther": GOOGLE_COMMON,
    "GoogleOther-Image": GOOGLE_COMMON,
    "GoogleOther-Video": GOOGLE_COMMON,
    "Google-CloudVertexBot": GOOGLE_SPECIAL,
    "PerplexityBot": "https://docs.perplexity.ai/guides/bots",
    "Perplexity-User": "https://docs.perplexity.ai/guides/bots",
    "CCBot": "https://commoncrawl.org/ccbot",
    "Applebot": APPLE,
    "Applebot-Extended": APPLE,
    "meta-externalagent": META,
    "meta-externalfetcher": META,
    "meta-webindexer": META,
    "facebookexternalhit": META,
    "Amazonbot": "https://developer.amazon.com/amazonbot",
    "MistralAI-User": "https://docs.mistral.ai/robots",
    "DuckAssistBot": "https://duckduckgo.com/duckassistbot",
}

# ai.robots.txt's categories (from knownagents.com) as ours.
FUNCTION_CATEGORY = {
    "AI Assistants": "assistant",
    "AI Agents": "assistant",
    "AI Coding Agents": "assistant",
    "AI Search Crawlers": "search",
    "AI Data Scrapers": "training",
    "AI Data Providers": "other",
    "Undocumented AI Agents": "other",
}

# Free-text functions, and entries whose category above does not hold
# (the description says the agent is not known to be AI-related, or is
# a tool anyone runs).
CATEGORY = {
    # training: the function or the operator says the data trains models.
    "anthropic-ai": "training",
    "Applebot-Extended": "training",  # Apple: use for training its models
    "Bytespider": "training",
    "CCBot": "training",  # an open crawl used, among others, for ML/AI
    "ClaudeBot": "training",
    "Cotoyogi": "training",
    "DeepSeekBot": "training",
    "FacebookBot": "training",
    "Factset_spyderbot": "training",
    "FriendlyCrawler": "training",
    "Google-Extended": "training",
    "GPTBot": "training",
    "ICC-Crawler": "training",
    "ISSCyberRiskCrawler": "training",
    "LAIONDownloader": "training",
    "meta-externalagent": "training",
    "SBIntuitionsBot": "training",
    "TikTokSpider": "training",
    "Timpibot": "training",
    "VelenPublicWebCrawler": "training",
    # search: indexes pages for an (AI) search engine or its answers.
    "amazon-kendra": "search",
    "Andibot": "search",
    "Anomura": "search",
    "atlassian-bot": "search",
    "Claude-SearchBot": "search",
    "Cloudflare-AutoRAG": "search",
    "meta-webindexer": "search",
    "OAI-SearchBot": "search",
    "PerplexityBot": "search",
    "PetalBot": "search",
    "YandexAdditional": "search",
    "YandexAdditionalBot": "search",
    "YouBot": "search",
    # assistant: fetches a page because a user asked.
    "BuddyBot": "assistant",
    "cohere-ai": "assistant",
    "meta-externalfetcher": "assistant",
    # other: several uses, data sold, previews, tools, not known to be AI.
    "AgentTimes": "other",
    "aiHitBot": "other",
    "Amazonbot": "other",
    "Awario": "other",
    "bedrockbot": "other",
    "EchoboxBot": "other",
    "facebookexternalhit": "other",
    "Google-CloudVertexBot": "other",
    "Google-Firebase": "other",
    "GoogleOther": "other",
    "GoogleOther-Image": "other",
    "GoogleOther-Video": "other",
    "ImagesiftBot": "other",
    "Lightpanda": "other",
    "MyCentralAIScraperBot": "other",
    "NagetBot": "other",
    "newsai": "other",
    "omgili": "other",
    "omgilibot": "other",
    "OpenAI": "other",
    "Panscient": "other",
    "QuillBot": "other",
    "Scrapy": "other",
    "SemrushBot-OCOB": "other",
    "SemrushBot-SWA": "other",
    "Thinkbot": "other",
    "WARDBot": "other",
    "wpbot": "other",
    "YaK": "other",
}

# Operators where the field is "Unclear at this time." or a sentence; taken
# from the entry's own description (or "unknown" where it names none).
OPERATOR = {
    "AddSearchBot": "AddSearch",
    "AIWebIndex": "Lyrenth",
    "amazon-QBusiness": "Amazon",
    "Amzn-SearchBot": "Amazon",
    "Amzn-User": "Amazon",
    "ApifyBot": "Apify",
    "ApifyWebsiteContentCrawler": "Apify",
    "Applebot": "Apple",
    "Aranet-SearchBot": "unknown",
    "AzureAI-SearchBot": "Microsoft",
    "Brightbot": "Bright Data",
    "Bravebot": "Brave",
    "ChatGLM-Spider": "unknown",
    "Claude-Code": "Anthropic",
    "CloudVertexBot": "Google",
    "Code": "GitHub",
    "cohere-training-data-crawler": "Cohere",
    "CragCrawler": "CragSoftware",
    "Crawl4AI": "unknown",
    "Cursor": "unknown",
    "DuckAssistBot": "DuckDuckGo",
    "ExaBot": "Exa",
    "FirecrawlAgent": "Firecrawl",
    "FriendlyCrawler": "unknown",
    "GeistHaus-PageFetcher": "GeistHaus",
    "Gemini-Deep-Research": "Google",
    "Google-Agent": "Google",
    "Google-Gemini-CLI": "Google",
    "Google-NotebookLM": "Google",
    "GoogleAgent-URLContext": "Google",
    "HenkBot": "Valyu",
    "iAskBot": "unknown",
    "iaskspider": "iAsk",  # its "iaskspider/2.0" entry
    "imageSpider": "unknown",
    "kagi-fetcher": "Kagi",
    "Kangaroo Bot": "Kangaroo LLM",
    "Kimi-User": "Moonshot AI",
    "KunatoCrawler": "unknown",
    "laion-huggingface-processor": "unknown",
    "LAIONDownloader": "LAION",
    "LCC": "unknown",
    "Lightpanda": "anyone running the Lightpanda browser",
    "LinerBot": "Liner",
    "LinkupBot": "unknown",
    "Manus-User": "Butterfly Effect",
    "meta-externalfetcher": "Meta",
    "meta-externalagent": "Meta",
    "meta-webindexer": "Meta",
    "MistralAI-User": "Mistral AI",
    "MyCentralAIScraperBot": "unknown",
    "NagetBot": "Naget",
    "newsai": "unknown",
    "NotebookLM": "Google",
    "NovaAct": "Amazon",
    "opencode": "unknown",
    "Operator": "OpenAI",
    "PanguBot": "Huawei",
    "Poggio-Citations": "Poggio",
    "Querit-SearchBot": "Querit",
    "QueritBot": "Querit",
    "Shap-User": "Parallel Web Systems",
    "Spider": "unknown",
    "TavilyBot": "Tavily",
    "TongyiBot": "Alibaba",
    "Trae": "ByteDance",
    "TwinAgent": "Twin",
    "UseAI": "Use AI",
    "Webzio-Extended": "Webz.io",
    "WRTNBot": "unknown",
    "YiyanBot": "Baidu",
    "ZanistaBot": "unknown",
    "amazon-kendra": "Amazon",
    "Amazonbot": "Amazon",
    "AI2Bot-DeepResearchEval": "Ai2",
}

# Two spellings of one token (tokens match case-insensitively): the one
# the operator documents is kept.
DUPLICATES = {
    "Meta-ExternalAgent": "meta-externalagent",
    "Meta-ExternalFetcher": "meta-externalfetcher",
    "webzio-extended": "Webzio-Extended",
}

TOKEN = re.compile(r"[A-Za-z_-]+")


def operator(name, entry):
    if name in OPERATOR:
        return OPERATOR[name]
    text = entry["operator"].strip()
    link = re.fullmatch(r"\[([^\]]+)\]\([^)]*\)", text)
    if link:
        return link.group(1)
    if text.startswith("http"):
        return None
    if "Unclear" in text or text == "Unknown" or len(text) > 40:
        return None
    return text


def main():
    entries = json.load(open(sys.argv[1], encoding="utf-8"))
    rows, left_out = [], []
    for name, entry in entries.items():
        if name in DUPLICATES:
            left_out.append((name, f"the same token as {DUPLICATES[name]}"))
            continue
        if not TOKEN.fullmatch(name):
            left_out.append((name, "not an RFC 9309 product token"))
            continue
        category = CATEGORY.get(name) or FUNCTION_CATEGORY.get(
            entry["function"]
        )
        if category is None:
            sys.exit(f"{name}: no category for {entry['function']!r}")
        who = operator(name, entry)
        if who is None:
            sys.exit(f"{name}: no operator in {entry['operator']!r}")
        rows.append((name, category, who, DOCS.get(name, AI_ROBOTS)))
    print("# AI crawler product tokens: TOKEN<TAB>CATEGORY<TAB>OPERATOR<TAB>SOURCE")
    print("# DO NOT EDIT: generated by")
    print("#   python3 data/agents/make-ai-tsv.py ROBOTS_JSON > data/agents/ai.tsv")
    print("# from ai.robots.txt's robots.json (MIT); see data/agents/README.md.")
    for row in sorted(rows, key=lambda r: r[0].lower()):
        print("\t".join(row))
    for name, why in left_out:
        print(f"left out: {name!r}: {why}", file=sys.stderr)


main()
