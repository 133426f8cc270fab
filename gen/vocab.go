package gen

// The vocabulary pools. Every work cluster draws its subject vocabulary from one
// domain, every personal cluster from one hobby subject, so the notes of a
// cluster share most of their words, as the notes about one system do in a real
// vault. Nothing here is mutated after package initialisation.

// domain is the vocabulary of one area of work.
type domain struct {
	name       string   // as written in prose: "ML pipelines"
	area       string   // the knowledge/<area>/ folder
	team       string   // "the storage team"
	components []string // the parts of a system of this kind
	problems   []string // the things that go wrong with it
	metrics    []string // what is graphed
	sections   []string // config key prefixes ("compaction" in compaction.max_concurrent)
	settings   []string // config key names ("max_concurrent")
	nouns      []string // plural things the system handles
	actions    []string // what gets rolled out or changed
	concepts   []string // what a knowledge note explains
	topics     []string // frontmatter topics
}

var domains = []domain{
	{
		name: "storage", area: "storage", team: "the storage team",
		components: []string{"compaction scheduler", "write-ahead log", "memtable", "block cache", "bloom filters", "shard balancer", "retention sweep", "snapshot service", "replication stream", "manifest", "query engine", "ingest path"},
		problems:   []string{"compaction backlog", "write stall", "hot shard", "replica lag", "slow fsync", "disk pressure", "corrupted segment", "retention sweep deleting live data", "cache thrash", "tombstone buildup"},
		metrics:    []string{"L0 file count", "fsync latency", "read amplification", "disk usage", "replica lag", "p99 query latency", "write throughput", "cache hit ratio"},
		sections:   []string{"compaction", "wal", "cache", "retention", "shard", "replication", "query", "ingest"},
		settings:   []string{"max_concurrent", "fsync_interval", "segment_size", "l0_trigger", "buffer_size", "sweep_interval", "replicas", "max_memory", "io_budget_mb_s", "bloom_bits_per_key", "block_size", "stall_timeout"},
		nouns:      []string{"writes", "reads", "shards", "segments", "tenants", "snapshots", "replicas"},
		actions:    []string{"shard rebalance", "WAL fsync batching", "tiered storage", "compaction throttling", "snapshot restore drill", "replica resync", "bloom filter rebuild", "retention policy change"},
		concepts:   []string{"LSM compaction", "write amplification", "group commit", "replication lag", "tombstones", "consistent snapshots"},
		topics:     []string{"storage", "compaction", "wal", "retention", "shards", "replication", "disk"},
	},
	{
		name: "queues", area: "queues", team: "the queueing team",
		components: []string{"scheduler", "lease manager", "dead-letter queue", "retry policy", "worker pool", "admission controller", "dispatcher", "visibility timer", "priority lanes", "job store"},
		problems:   []string{"retry storm", "lease expiry storm", "dead-letter queue flood", "stuck consumers", "scheduler drift", "duplicate deliveries", "poison message", "queue backlog"},
		metrics:    []string{"queue depth", "age of the oldest job", "redelivery rate", "lease renewals per second", "worker utilisation", "dead-letter rate"},
		sections:   []string{"retry", "lease", "dlq", "scheduler", "worker", "admission", "dispatch"},
		settings:   []string{"base_delay_ms", "jitter", "max_attempts", "ttl_ms", "renew_interval_ms", "max_size", "concurrency", "tick_interval", "max_inflight", "visibility_timeout"},
		nouns:      []string{"jobs", "messages", "workers", "leases", "queues", "consumers"},
		actions:    []string{"admission backpressure", "lease renewal fix", "priority lanes", "DLQ replay tooling", "scheduler rewrite", "exactly-once handoff", "admission limits", "worker autoscaling"},
		concepts:   []string{"backpressure", "idempotency", "at-least-once delivery", "retries with jitter", "visibility timeouts", "poison messages"},
		topics:     []string{"queues", "retries", "leases", "backpressure", "scheduling", "workers"},
	},
	{
		name: "networking", area: "networking", team: "the network team",
		components: []string{"load balancer", "mesh sidecar", "DNS resolver", "connection pool", "TLS terminator", "edge proxy", "health checker", "BGP session", "NAT gateway", "rate limiter"},
		problems:   []string{"DNS resolution timeouts", "connection pool exhaustion", "TLS handshake failures", "packet loss between zones", "asymmetric routing", "health check flapping", "SYN backlog overflow", "certificate expiry"},
		metrics:    []string{"p99 connect time", "TCP retransmits", "open connections", "handshake errors per second", "packet loss", "5xx rate at the edge"},
		sections:   []string{"lb", "mesh", "dns", "pool", "tls", "proxy", "healthcheck"},
		settings:   []string{"idle_timeout", "max_connections", "keepalive_interval", "cache_ttl", "handshake_timeout", "retries", "outlier_ejection_pct", "drain_seconds"},
		nouns:      []string{"connections", "requests", "packets", "endpoints", "certificates", "routes"},
		actions:    []string{"mesh sidecar upgrade", "IPv6 dual stack", "certificate rotation automation", "zone-aware routing", "connection draining", "DNS cache", "edge proxy migration", "HTTP/3 at the edge"},
		concepts:   []string{"connection pooling", "load balancing algorithms", "TLS session resumption", "tail latency", "health checking", "anycast routing"},
		topics:     []string{"networking", "dns", "tls", "load-balancing", "latency", "proxies"},
	},
	{
		name: "billing", area: "billing", team: "the billing team",
		components: []string{"invoice generator", "usage meter", "pricing engine", "ledger", "dunning service", "tax calculator", "proration logic", "payment retry job", "revenue report", "credit note service"},
		problems:   []string{"double-charged customers", "missing usage records", "proration rounding errors", "invoice run timeout", "currency conversion drift", "tax rate mismatch", "ledger imbalance", "late dunning emails"},
		metrics:    []string{"invoice run duration", "unbilled usage", "failed charges", "ledger drift", "dunning recovery rate", "disputes per thousand invoices"},
		sections:   []string{"invoice", "usage", "pricing", "ledger", "dunning", "tax"},
		settings:   []string{"run_day", "batch_size", "rounding_mode", "grace_days", "retry_schedule", "currency_source", "cutoff_hour", "max_line_items"},
		nouns:      []string{"invoices", "customers", "charges", "subscriptions", "line items", "refunds"},
		actions:    []string{"usage-based pricing", "double-entry ledger migration", "dunning schedule change", "multi-currency invoices", "tax engine switch", "annual plan proration", "parallel invoice runs", "credit note automation"},
		concepts:   []string{"double-entry bookkeeping", "proration", "idempotent charges", "revenue recognition", "usage metering", "reconciliation"},
		topics:     []string{"billing", "invoices", "payments", "pricing", "ledger", "tax"},
	},
	{
		name: "auth", area: "auth", team: "the identity team",
		components: []string{"token service", "session store", "OAuth flow", "password hashing", "MFA enrolment", "key rotation job", "permission checker", "SSO connector", "audit log", "refresh token store"},
		problems:   []string{"signing key rollover outage", "session fixation report", "login latency spike", "SSO metadata expiry", "stale permission cache", "MFA lockouts", "refresh token reuse", "credential stuffing attempts"},
		metrics:    []string{"login success rate", "token issuance latency", "MFA challenge failures", "session store hit ratio", "permission check p99", "lockouts per hour"},
		sections:   []string{"token", "session", "oauth", "mfa", "keys", "rbac", "sso"},
		settings:   []string{"ttl_minutes", "rotation_days", "max_sessions", "hash_cost", "cache_ttl", "lockout_threshold", "clock_skew_seconds", "refresh_window"},
		nouns:      []string{"tokens", "sessions", "users", "keys", "roles", "permissions"},
		actions:    []string{"key rotation automation", "passkey support", "session store migration", "RBAC model v2", "SSO self-service", "MFA enforcement", "short-lived tokens", "audit log export"},
		concepts:   []string{"OAuth scopes", "token revocation", "password hashing", "least privilege", "session management", "key rotation"},
		topics:     []string{"auth", "tokens", "sessions", "sso", "mfa", "security"},
	},
	{
		name: "search", area: "search", team: "the search team",
		components: []string{"indexer", "query parser", "ranking model", "inverted index", "autocomplete service", "synonym table", "crawler", "shard router", "reranker", "spell checker"},
		problems:   []string{"stale index", "relevance regression", "indexing lag", "query of death", "shard imbalance", "synonym explosion", "autocomplete latency spike", "duplicate results"},
		metrics:    []string{"indexing lag", "query p99 latency", "click-through rate", "zero-result rate", "NDCG on the judged set", "index size"},
		sections:   []string{"indexer", "query", "ranking", "autocomplete", "synonyms", "crawler", "router"},
		settings:   []string{"refresh_interval", "max_clauses", "boost_title", "min_should_match", "batch_size", "top_k", "timeout_ms", "fuzziness"},
		nouns:      []string{"documents", "queries", "results", "shards", "fields", "judgments"},
		actions:    []string{"BM25 tuning", "learning-to-rank model", "index rebuild", "semantic reranking", "synonym cleanup", "query rewrite layer", "shard split", "autocomplete cache"},
		concepts:   []string{"BM25", "inverted indexes", "relevance evaluation", "query understanding", "reranking", "tokenisation"},
		topics:     []string{"search", "relevance", "indexing", "ranking", "queries"},
	},
	{
		name: "ML pipelines", area: "ml", team: "the ML platform team",
		components: []string{"feature store", "training pipeline", "model registry", "batch scorer", "feature backfill job", "data validation step", "online inference service", "labelling queue", "experiment tracker", "drift monitor"},
		problems:   []string{"training-serving skew", "feature backfill gap", "silent data drift", "GPU job preemption", "model registry mismatch", "label leakage", "stale embeddings", "out-of-memory in batch scoring"},
		metrics:    []string{"AUC on the holdout set", "feature freshness", "training job duration", "inference p99", "drift score", "GPU utilisation"},
		sections:   []string{"features", "training", "registry", "scoring", "validation", "inference"},
		settings:   []string{"lookback_days", "batch_size", "learning_rate", "max_epochs", "freshness_sla_hours", "shadow_traffic_pct", "drift_threshold", "checkpoint_interval"},
		nouns:      []string{"features", "models", "datasets", "labels", "experiments", "predictions"},
		actions:    []string{"feature store migration", "shadow deployment", "nightly retraining", "data validation gates", "embedding refresh", "GPU pool consolidation", "model rollback tooling", "offline evaluation harness"},
		concepts:   []string{"training-serving skew", "data drift", "feature freshness", "offline evaluation", "model versioning", "shadow deployments"},
		topics:     []string{"ml", "features", "training", "models", "drift", "data"},
	},
	{
		name: "mobile", area: "mobile", team: "the mobile team",
		components: []string{"app startup path", "push notification service", "offline sync", "crash reporter", "image cache", "feature flag client", "deep link router", "release train", "API client", "analytics SDK"},
		problems:   []string{"crash on cold start", "expired push tokens", "offline sync conflicts", "ANR spike", "battery drain complaints", "broken deep links", "app store rejection", "memory leak in the image cache"},
		metrics:    []string{"crash-free sessions", "cold start time", "ANR rate", "push delivery rate", "sync conflict rate", "app size"},
		sections:   []string{"sync", "push", "flags", "images", "startup", "release"},
		settings:   []string{"batch_interval", "max_retries", "cache_mb", "rollout_pct", "timeout_ms", "prefetch_count", "min_os_version", "token_refresh_hours"},
		nouns:      []string{"devices", "releases", "sessions", "users", "builds", "notifications"},
		actions:    []string{"staged rollout", "offline-first sync", "app size reduction", "weekly release train", "crash triage rotation", "image cache rewrite", "deep link audit", "startup time budget"},
		concepts:   []string{"staged rollouts", "offline-first design", "crash triage", "app startup", "conflict resolution", "feature flags"},
		topics:     []string{"mobile", "ios", "android", "releases", "crashes", "sync"},
	},
	{
		name: "infra", area: "infra", team: "the platform team",
		components: []string{"Kubernetes control plane", "node autoscaler", "Terraform state", "CI runners", "container registry", "secrets manager", "base images", "ingress controller", "etcd cluster", "node pools"},
		problems:   []string{"etcd latency spike", "autoscaler thrash", "Terraform state lock", "image pull backoff", "node pool exhaustion", "expired secrets", "noisy neighbour", "kernel upgrade regression"},
		metrics:    []string{"pod scheduling latency", "node utilisation", "etcd fsync latency", "image pull time", "cost per namespace", "pending pods"},
		sections:   []string{"autoscaler", "etcd", "registry", "secrets", "nodes", "ingress"},
		settings:   []string{"scale_down_delay", "max_nodes", "quota_cpu", "snapshot_interval", "pull_timeout", "rotation_days", "eviction_threshold", "surge_pct"},
		nouns:      []string{"nodes", "pods", "namespaces", "images", "clusters", "secrets"},
		actions:    []string{"cluster upgrade", "spot node pools", "base image refresh", "secrets rotation", "autoscaler tuning", "zone failover drill", "registry mirror", "cost allocation tags"},
		concepts:   []string{"capacity planning", "bin packing", "infrastructure as code", "blast radius", "graceful node drains", "immutable infrastructure"},
		topics:     []string{"infra", "kubernetes", "capacity", "terraform", "nodes", "cost"},
	},
	{
		name: "observability", area: "observability", team: "the observability team",
		components: []string{"metrics pipeline", "log shipper", "tracing collector", "alert router", "dashboard service", "sampling policy", "cardinality limiter", "retention tiers", "paging integration", "SLO calculator"},
		problems:   []string{"alert storm", "cardinality explosion", "log pipeline backlog", "missing traces", "paging gap", "dashboard query timeouts", "clock skew in spans", "noisy alerts"},
		metrics:    []string{"active series", "log ingest lag", "span drop rate", "alert volume per week", "SLO burn rate", "pages per shift"},
		sections:   []string{"metrics", "logs", "tracing", "alerts", "slo", "sampling"},
		settings:   []string{"scrape_interval", "max_series", "sample_rate", "retention_days", "group_wait", "burn_window", "batch_bytes", "flush_interval"},
		nouns:      []string{"alerts", "series", "spans", "dashboards", "pages", "log lines"},
		actions:    []string{"SLO-based alerting", "tail sampling", "log retention tiers", "cardinality budget", "alert routing rewrite", "dashboard cleanup", "tracing rollout", "pager rotation change"},
		concepts:   []string{"SLOs and error budgets", "alert fatigue", "metric cardinality", "trace sampling", "structured logging", "on-call health"},
		topics:     []string{"observability", "alerting", "metrics", "logs", "tracing", "slo"},
	},
}

// hobby is the vocabulary of one personal interest.
type hobby struct {
	name       string // the personal/<name>/ folder
	subjects   []subject
	tools      []string
	techniques []string
	problems   []string
	places     []string
	units      []unit
	adjs       []string
	sources    []string
}

// subject is one theme inside a hobby, with the things it is about.
type subject struct {
	name  string
	items []string
}

// unit is a quantity the hobby measures in, with a plausible range.
type unit struct {
	name           string
	min, max, step int
}

var hobbies = []hobby{
	{
		name: "cooking",
		subjects: []subject{
			{"Thai curries", []string{"green curry paste", "coconut milk", "fish sauce", "palm sugar", "galangal", "lime leaves"}},
			{"braises", []string{"short ribs", "pork shoulder", "red wine", "mirepoix", "chicken stock", "tomato paste"}},
			{"weeknight pasta", []string{"guanciale", "pecorino", "pasta water", "anchovies", "cherry tomatoes", "garlic"}},
			{"dumplings", []string{"dumpling wrappers", "pork filling", "napa cabbage", "ginger", "black vinegar", "chilli oil"}},
			{"stocks and soups", []string{"chicken carcasses", "onion skins", "bay leaves", "miso", "leeks", "parmesan rinds"}},
		},
		tools:      []string{"dutch oven", "cast iron pan", "mortar and pestle", "chef's knife", "instant-read thermometer", "wok"},
		techniques: []string{"searing", "deglazing", "reducing the sauce", "blooming the spices", "brining", "resting the meat"},
		problems:   []string{"a split sauce", "a bland broth", "burnt garlic", "tough meat", "too much salt", "a watery curry"},
		places:     []string{"the Saturday market", "the Asian grocer", "the butcher on Hill Street", "my parents' kitchen"},
		units:      []unit{{"g", 50, 600, 25}, {"ml", 100, 800, 50}, {"tbsp", 1, 4, 1}, {"minutes", 10, 180, 5}},
		adjs:       []string{"much better", "a bit flat", "too salty", "about right", "worse than last time", "surprisingly good"},
		sources:    []string{"own notes", "recipe from a friend", "adapted from a cookbook"},
	},
	{
		name: "running",
		subjects: []subject{
			{"marathon training", []string{"long run", "marathon pace", "gels", "taper", "weekly mileage", "race-day shoes"}},
			{"10k speed", []string{"intervals", "tempo run", "track session", "strides", "threshold pace", "parkrun"}},
			{"trail running", []string{"hill repeats", "vest", "trail shoes", "descents", "poles", "elevation gain"}},
			{"injury comeback", []string{"calf strain", "physio exercises", "easy miles", "foam roller", "run-walk intervals", "strength work"}},
		},
		tools:      []string{"GPS watch", "heart-rate strap", "treadmill", "training plan spreadsheet", "foam roller", "headlamp"},
		techniques: []string{"easy pacing", "negative splits", "cadence drills", "heart-rate zones", "fuelling every 40 minutes", "a proper cooldown"},
		problems:   []string{"a sore calf", "going out too fast", "stomach trouble", "poor sleep", "a heavy-legs week", "blisters"},
		places:     []string{"the canal path", "the park loop", "the hill behind the reservoir", "the athletics track"},
		units:      []unit{{"km", 3, 35, 1}, {"minutes", 20, 180, 5}, {"bpm", 120, 185, 1}, {"metres of climbing", 100, 1500, 50}},
		adjs:       []string{"much easier", "harder than planned", "steady", "about right", "worse than last week", "surprisingly good"},
		sources:    []string{"training log", "own notes", "coach's plan"},
	},
	{
		name: "gardening",
		subjects: []subject{
			{"tomatoes", []string{"seedlings", "side shoots", "tomato feed", "blight", "cordons", "cherry tomatoes"}},
			{"raised beds", []string{"topsoil", "compost", "sleepers", "mulch", "crop rotation", "netting"}},
			{"composting", []string{"green waste", "brown cardboard", "compost bin", "worms", "leaf mould", "coffee grounds"}},
			{"fruit trees", []string{"apple tree", "pear tree", "winter pruning", "rootstock", "fruit set", "grease bands"}},
		},
		tools:      []string{"secateurs", "hand trowel", "hose timer", "soil thermometer", "propagator", "wheelbarrow"},
		techniques: []string{"hardening off", "succession sowing", "deep watering", "pinching out", "companion planting", "mulching"},
		problems:   []string{"slugs", "blight", "a late frost", "aphids", "waterlogging", "bolting lettuce"},
		places:     []string{"the allotment", "the back garden", "the garden centre", "the greenhouse"},
		units:      []unit{{"litres", 2, 40, 2}, {"cm", 5, 120, 5}, {"plants", 2, 30, 1}, {"days", 3, 30, 1}},
		adjs:       []string{"much healthier", "leggy", "disappointing", "about right", "worse than last year", "surprisingly good"},
		sources:    []string{"own notes", "allotment society newsletter", "seed packet, annotated"},
	},
	{
		name: "travel",
		subjects: []subject{
			{"Lisbon trip", []string{"Alfama", "tram 28", "pasteis de nata", "Sintra day trip", "miradouros", "fado bar"}},
			{"Japan rail trip", []string{"JR pass", "Kyoto temples", "shinkansen", "ryokan", "Osaka street food", "luggage forwarding"}},
			{"Scottish Highlands", []string{"Glencoe", "hire car", "bothy", "midges", "single-track roads", "Skye ferry"}},
			{"Iceland ring road", []string{"campervan", "hot springs", "Westfjords", "glacier walk", "gravel roads", "fuel stops"}},
		},
		tools:      []string{"packing list", "rail app", "offline maps", "travel adapter", "daypack", "rain shell"},
		techniques: []string{"booking early", "packing light", "travelling off-season", "leaving a spare day", "walking everywhere", "eating where the locals eat"},
		problems:   []string{"a missed connection", "lost luggage", "bad weather", "an overbooked hostel", "jet lag", "a cancelled ferry"},
		places:     []string{"the airport", "the train station", "the old town", "the guesthouse"},
		units:      []unit{{"days", 2, 21, 1}, {"euros", 20, 900, 10}, {"km", 5, 400, 5}, {"hours", 1, 14, 1}},
		adjs:       []string{"wonderful", "overrated", "exhausting", "about right", "better than expected", "surprisingly cheap"},
		sources:    []string{"own notes", "travel journal", "friend's recommendations"},
	},
	{
		name: "baking",
		subjects: []subject{
			{"sourdough", []string{"starter", "levain", "bulk ferment", "shaping", "banneton", "oven spring"}},
			{"rye bread", []string{"whole rye flour", "caraway", "scald", "rye sour", "tin loaf", "molasses"}},
			{"croissants", []string{"laminated dough", "butter block", "folds", "proofing box", "egg wash", "honeycomb crumb"}},
			{"pizza dough", []string{"tipo 00 flour", "cold ferment", "dough balls", "pizza steel", "mozzarella", "leopard spotting"}},
		},
		tools:      []string{"dutch oven", "kitchen scale", "bench scraper", "probe thermometer", "lame", "stand mixer"},
		techniques: []string{"autolyse", "stretch and folds", "cold retard", "pre-shaping", "steaming the oven", "checking dough temperature"},
		problems:   []string{"over-proofing", "a gummy crumb", "a flat loaf", "a burnt base", "sluggish fermentation", "tearing during shaping"},
		places:     []string{"the mill shop", "the farmers' market", "my kitchen", "the bakery course"},
		units:      []unit{{"g", 10, 900, 10}, {"hours", 1, 16, 1}, {"C", 20, 260, 5}, {"percent hydration", 60, 85, 1}},
		adjs:       []string{"much lighter", "dense", "flat", "about right", "worse than last time", "surprisingly open"},
		sources:    []string{"own notes", "baking class handout", "adapted from a book"},
	},
	{
		name: "cycling",
		subjects: []subject{
			{"bike maintenance", []string{"chain wear", "brake pads", "tubeless sealant", "derailleur hanger", "bottom bracket", "cable tension"}},
			{"audax rides", []string{"brevet card", "control stops", "dynamo light", "saddle sores", "night section", "route file"}},
			{"commuting", []string{"panniers", "mudguards", "rain jacket", "lights", "cycle lane", "lock"}},
		},
		tools:      []string{"torque wrench", "chain checker", "track pump", "multitool", "work stand", "tyre levers"},
		techniques: []string{"steady pacing", "eating before hungry", "indexing gears", "checking tyre pressure", "bleeding the brakes", "riding in a group"},
		problems:   []string{"a puncture", "a slipping chain", "headwind", "numb hands", "a squeaking bottom bracket", "cramp"},
		places:     []string{"the bike shop", "the river path", "the coast road", "the café stop"},
		units:      []unit{{"km", 10, 300, 10}, {"psi", 40, 100, 5}, {"Nm", 4, 40, 1}, {"hours", 1, 14, 1}},
		adjs:       []string{"much smoother", "hard going", "noisy", "about right", "worse than last month", "surprisingly quick"},
		sources:    []string{"own notes", "ride log", "club forum"},
	},
	{
		name: "photography",
		subjects: []subject{
			{"film photography", []string{"Portra 400", "light meter", "rangefinder", "push processing", "negatives", "scanner"}},
			{"street photography", []string{"35mm lens", "zone focusing", "candid portraits", "golden hour", "contact sheets", "crowds"}},
			{"landscape photography", []string{"tripod", "ND filter", "blue hour", "focus stacking", "foreground", "weather window"}},
		},
		tools:      []string{"tripod", "light meter", "lens hood", "remote shutter", "editing software", "camera bag"},
		techniques: []string{"exposing for the highlights", "bracketing", "waiting for the light", "shooting wide open", "editing in batches", "culling hard"},
		problems:   []string{"blown highlights", "camera shake", "flat light", "dust on the sensor", "missed focus", "a light leak"},
		places:     []string{"the harbour", "the market square", "the ridge above town", "the photo lab"},
		units:      []unit{{"mm", 14, 200, 1}, {"seconds", 1, 30, 1}, {"frames", 12, 36, 1}, {"ISO", 100, 3200, 100}},
		adjs:       []string{"much sharper", "muddy", "flat", "about right", "worse than last roll", "surprisingly good"},
		sources:    []string{"own notes", "photo walk notes", "workshop handout"},
	},
	{
		name: "woodworking",
		subjects: []subject{
			{"workbench build", []string{"laminated top", "leg vice", "mortise and tenon", "dog holes", "oak offcuts", "drawbore pins"}},
			{"hand tools", []string{"block plane", "chisels", "sharpening stones", "saw set", "marking gauge", "card scraper"}},
			{"small furniture", []string{"side table", "dovetails", "tung oil", "walnut", "glue-up", "drawer runners"}},
		},
		tools:      []string{"block plane", "tenon saw", "router", "clamps", "combination square", "honing guide"},
		techniques: []string{"sharpening often", "marking from one face", "dry fitting", "sawing to the line", "flattening the back", "letting glue cure overnight"},
		problems:   []string{"tear-out", "a gappy joint", "a racked frame", "cupping boards", "a blunt chisel", "glue squeeze-out"},
		places:     []string{"the shed", "the timber yard", "the community workshop", "the garage"},
		units:      []unit{{"mm", 3, 900, 1}, {"degrees", 5, 45, 1}, {"grit", 120, 8000, 40}, {"hours", 1, 20, 1}},
		adjs:       []string{"much tighter", "rough", "slightly out of square", "about right", "worse than the first one", "surprisingly clean"},
		sources:    []string{"own notes", "woodworking forum thread", "class notes"},
	},
}

// Sessions are titled after what happened; each kind has its own sections.
var sessionKinds = []struct {
	name     string
	weight   int
	titles   []string // "{Problem} postmortem"; slug is taken from the title
	first    string   // always the first section
	headings []string // then some of these, in this order
	statuses []string
	sources  []string
}{
	{"postmortem", 30, []string{"{Problem} postmortem", "{Problem} on {env}", "{Problem} incident", "{Problem} during {action}"}, "Summary",
		[]string{"Timeline", "Impact", "Detection", "Root cause", "Why it hurt", "What went well", "Follow-ups", "Open questions"},
		[]string{"final", "final", "draft", "reviewed"}, []string{"incident channel #{slug}-incidents", "incident review meeting", "pager log and incident channel"}},
	{"rollout", 22, []string{"{Action} rollout", "Rolling out {action}", "{Action} rollout, phase {n}", "{Action} canary"}, "Summary",
		[]string{"Plan", "Rollout steps", "Metrics to watch", "Results", "Rollback plan", "Follow-ups"},
		[]string{"final", "in-progress", "draft"}, []string{"rollout tracker", "change ticket and rollout channel", "weekly {slug} sync"}},
	{"review", 20, []string{"{Problem} review", "{Comp} design review", "{Action} review", "{Comp} capacity review"}, "Context",
		[]string{"Findings", "Discussion", "Decisions", "Actions", "Open questions"},
		[]string{"final", "reviewed", "draft"}, []string{"design review notes", "review meeting", "shared doc comments"}},
	{"migration", 12, []string{"{Comp} migration to {ver}", "Migrating the {comp}", "{Comp} upgrade"}, "Why",
		[]string{"Plan", "What changed", "Problems found", "Results", "Cleanup"},
		[]string{"final", "in-progress"}, []string{"migration tracker", "weekly {slug} sync"}},
	{"load test", 8, []string{"{Comp} load test", "Load test of the {comp}", "{Noun} load test at {x} normal"}, "Setup",
		[]string{"Results", "Bottlenecks", "Surprises", "Next steps"},
		[]string{"final", "draft"}, []string{"load test run log", "perf channel"}},
	{"retro", 8, []string{"{Action} retrospective", "Retro: {problem}", "{Comp} quarter retro"}, "What went well",
		[]string{"What went badly", "Surprises", "Actions"},
		[]string{"final", "draft"}, []string{"team retro board", "retro meeting"}},
}

// Knowledge notes explain a concept; titles may name the system.
var knowledgeTitles = []string{"{Concept}", "{Concept} primer", "How the {comp} works", "Runbook: {problem}", "Tuning the {comp}", "{Comp} failure modes", "Notes on {concept}", "Checklist: {action}", "{Concept} in {sys}", "Debugging {problem}"}

var knowledgeHeadings = []string{"The idea", "How it works", "Signals", "Tuning", "Failure modes", "Anti-patterns", "In practice", "When not to use it", "Checklist", "Further reading"}

var knowledgeStatuses = []string{"active", "active", "draft", "archived"}

var knowledgeSources = []string{"own notes", "own notes, after a design review", "reading group", "conference talk notes", "own notes, rewritten after an incident"}

// refKinds are the reference pages a system has, one of each at most.
var refKinds = []struct {
	slug     string
	title    string
	headings []string
	source   string
}{
	{"config-keys", "{Sys} configuration keys", []string{"Conventions", "{Section} keys", "{Section2} keys", "{Section3} keys", "Deprecated keys"}, "generated from the config schema, annotated by hand"},
	{"error-codes", "{Sys} error codes", []string{"Conventions", "{Comp} codes", "{Comp2} codes", "Retired codes"}, "error registry"},
	{"cli", "{Sys} CLI", []string{"Install", "Commands", "Examples", "Exit codes"}, "CLI help output, tidied"},
	{"http-api", "{Sys} HTTP API", []string{"Authentication", "Endpoints", "Errors", "Limits"}, "API schema, annotated"},
	{"metrics", "{Sys} metrics", []string{"Naming", "{Comp} metrics", "{Comp2} metrics", "Dashboards"}, "metrics registry export"},
	{"alerts", "{Sys} alerts", []string{"Paging alerts", "Ticket alerts", "Silences"}, "alert rules repository"},
	{"glossary", "{Sys} glossary", []string{"Terms", "Abbreviations"}, "own notes"},
	{"release-notes", "{Sys} release notes", []string{"{ver}", "{ver2}", "{ver3}"}, "changelog, summarised"},
	{"runbook-index", "{Sys} runbook index", []string{"Paging alerts", "Common tasks", "Escalation"}, "on-call wiki"},
	{"limits", "{Sys} limits and quotas", []string{"Per-tenant limits", "Per-node limits", "Raising a limit"}, "capacity doc"},
	{"dashboards", "{Sys} dashboards", []string{"Overview", "{Comp}", "{Comp2}"}, "dashboard folder descriptions"},
	{"dependencies", "{Sys} dependencies", []string{"Upstream", "Downstream", "Failure behaviour"}, "architecture review"},
}

var personalTitles = []string{"{Item}", "{Item}, attempt {n}", "Notes on {technique}", "{Subject} log, {month}", "Fixing {problem}", "{Tool} notes", "{Subject} plan for {year}", "What I learned about {item}", "{Item} and {item2}", "Trying {technique}"}

var personalHeadings = []string{"What I did", "What went wrong", "Next time", "Notes", "Plan", "Kit", "Log", "Results", "Ideas"}

var personalStatuses = []string{"active", "done", "idea", "active"}

// syllables build system names such as "Ferrite" or "Orchard".
var syllables = []string{"fer", "rite", "or", "chard", "kes", "trel", "vin", "dor", "ma", "lo", "quen", "tis", "bar", "ley", "cor", "vex", "nim", "bus", "tal", "on", "sil", "ver", "ash", "wick", "zep", "hyr", "mont", "ara", "pel", "lux", "dra", "fen", "gal", "ion", "kor", "mir", "nox", "pax", "ril", "sol", "tor", "ul", "var", "yel", "zan", "bri", "cas", "del", "eno", "fal", "gri", "hal", "ith", "jar", "kel", "lin", "mor", "nel", "ost", "pra", "rho", "sen", "tum", "ven", "wal", "xen", "yor", "zil"}

var regions = []string{"eu1", "eu2", "eu3", "us1", "us2", "us3", "ap1", "ap2", "sa1"}

var givenNames = []string{"Adaeze", "Tor", "Maja", "Tomasz", "Priya", "Kenji", "Lucia", "Omar", "Ingrid", "Mateo", "Aisha", "Jonas", "Mei", "Farah", "Diego", "Signe", "Ravi", "Elif", "Bruno", "Noor", "Hana", "Luca", "Zanele", "Pavel", "Ines", "Kwame", "Sofia", "Arjun", "Camille", "Yusuf", "Greta", "Tariq", "Leila", "Mikko", "Ana", "Dmitri", "Chloe", "Hamza", "Freya", "Kofi", "Nadia", "Sven", "Marisol", "Jun", "Rosa", "Emeka", "Astrid", "Vikram", "Paula", "Hiroshi", "Amara", "Felix", "Zofia", "Idris", "Linnea", "Carlos", "Yara", "Oskar", "Bea", "Tendai"}

var surnames = []string{"Okonkwo", "Haraldsen", "Lindqvist", "Wierzbicki", "Raman", "Takahashi", "Ferreira", "Haddad", "Berg", "Alvarez", "Mensah", "Keller", "Chen", "Nasser", "Morales", "Dahl", "Iyer", "Yilmaz", "Costa", "Rahimi", "Sato", "Romano", "Dlamini", "Novak", "Carvalho", "Boateng", "Petrova", "Kapoor", "Laurent", "Demir", "Vogel", "Aziz", "Karimi", "Virtanen", "Silva", "Volkov", "Martin", "Qureshi", "Nilsson", "Owusu", "Rostami", "Lund", "Ortega", "Park", "Reyes", "Eze", "Holm", "Menon", "Duarte", "Watanabe", "Adeyemi", "Brandt", "Kowalski", "Bello", "Sandberg", "Navarro", "Hosseini", "Ekstrom", "Gomez", "Moyo", "Fischer", "Jovanovic", "Tanaka", "Abiodun", "Horvat", "Bianchi", "Mahlangu", "Sorensen", "Pereira", "Kim", "Osei", "Marsh", "Quinn", "Hale", "Whitford", "Oyelaran", "Grundy", "Ashworth", "Pennington", "Thorne"}

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

var multipliers = []string{"twice", "three times", "four times", "five times", "ten times"}

var durations = []string{"twenty minutes", "forty minutes", "an hour", "ninety minutes", "two hours", "three hours", "most of the afternoon", "six hours", "a day and a half", "two days"}
