# Varnish in front of `easel serve` (Varnish 7, VCL 4.1). scripts/varnish-test.sh runs it against
# a real easel on loopback; copy it and set the backend to your easel (or to the nginx balancer
# of scripts/cluster.sh).
#
# What it relies on from easel:
# - `Cache-Control: public, max-age=N` on every image, and a strong `ETag` of the bytes: Varnish
#   caches for N seconds, then revalidates with If-None-Match and easel answers 304 (no body);
# - `Vary: Accept` where the answer depends on it (AVIF, then WebP, for browsers that name them;
#   animations as WebP; JPEG or PNG otherwise): normalised below to one value per kind of
#   client, so Varnish keeps one copy per kind;
# - signed URLs (`?s=…`) are ordinary cacheable URLs: the signature is part of the key;
# - purge: with `cdnBanURLs` pointing here, easel's `DELETE /images/…` also sends
#   `BAN` with the source's `Surrogate-Key`, which every answer made from that source (or with
#   it, as a watermark) carries.
vcl 4.1;

backend easel {
    .host = "127.0.0.1";
    .port = "8080";
}

# Who may ban: the easel instances.
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    # Every request has an ID of its own: the client's, else Varnish's transaction number. A
    # miss carries it to easel (whose log lines then name it); vcl_deliver puts it on the answer,
    # so a hit never repeats the ID of the request that filled the cache.
    if (!req.http.X-Request-ID) {
        set req.http.X-Request-ID = "varnish-" + req.xid;
    }
    if (req.method == "BAN") {
        if (!client.ip ~ purgers) {
            return (synth(403, "Forbidden"));
        }
        if (req.http.Surrogate-Key !~ "^easel-[0-9a-f]{16}$") {
            return (synth(400, "Surrogate-Key missing or malformed"));
        }
        # An answer carries one key per source it was made from (its image, a watermark),
        # separated by spaces: the banned key as a whole word among them.
        ban("obj.http.Surrogate-Key ~ \b" + req.http.Surrogate-Key + "\b");
        return (synth(200, "Banned"));
    }
    if (req.url ~ "^/images/") {
        # One Accept per kind of client easel tells apart: whether it takes AVIF, JPEG XL (which
        # easel negotiates only when turned on) and WebP, and, for one that takes no WebP,
        # whether it names GIF (animations as GIF). A type refused with q=0 is not taken. Other
        # q-values are not kept: a client that rates AVIF low but above 0 gets AVIF here, where
        # easel alone would weigh it against JPEG (both are formats the client takes).
        set req.http.X-Accept = "";
        if (req.http.Accept ~ "image/avif" && req.http.Accept !~ "image/avif\s*;\s*q=0(\.0*)?\s*(,|$)") {
            set req.http.X-Accept = req.http.X-Accept + "image/avif,";
        }
        if (req.http.Accept ~ "image/jxl" && req.http.Accept !~ "image/jxl\s*;\s*q=0(\.0*)?\s*(,|$)") {
            set req.http.X-Accept = req.http.X-Accept + "image/jxl,";
        }
        if (req.http.Accept ~ "image/webp" && req.http.Accept !~ "image/webp\s*;\s*q=0(\.0*)?\s*(,|$)") {
            set req.http.X-Accept = req.http.X-Accept + "image/webp,";
        } elsif (req.http.Accept ~ "image/gif" && req.http.Accept !~ "image/gif\s*;\s*q=0(\.0*)?\s*(,|$)") {
            set req.http.X-Accept = req.http.X-Accept + "image/gif,";
        }
        if (req.http.X-Accept == "") {
            unset req.http.Accept;
        } else {
            set req.http.Accept = regsub(req.http.X-Accept, ",$", "");
        }
        unset req.http.X-Accept;
        # Images are public: cookies never change them.
        unset req.http.Cookie;
    }
}

sub vcl_backend_response {
    # Keep expired objects for an hour so that Varnish revalidates (If-None-Match, 304) instead
    # of fetching the bytes again.
    set beresp.keep = 1h;
    if (beresp.was_304) {
        set beresp.http.X-Easel-Revalidated = "true";
    }
}

sub vcl_deliver {
    set resp.http.X-Request-ID = req.http.X-Request-ID;
    # For people and tests: whether this answer came from Varnish's cache.
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}
