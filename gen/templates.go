package gen

// Sentence templates. A {name} is filled from the note's cluster vocabulary and
// its own details (see writer.value); a capitalised {Name} is the same value
// with its first letter in upper case. Sentences are grouped by the role of the
// section they appear in, so a "Timeline" reads like a timeline and a "Signals"
// section like one.

// role names a pool of sentences.
type role int

const (
	roleGeneric role = iota
	roleSummary
	roleImpact
	roleDetection
	roleCause
	roleWentWell
	rolePlan
	roleResults
	roleRollback
	roleContext
	roleFindings
	roleDiscussion
	roleDecisions
	roleExplain
	roleSignals
	roleTuning
	roleReference
	rolePersonalLog
	rolePersonalProblem
	rolePersonalNext
	rolePersonalNotes
	rolePersonalPlan
	numRoles
)

var sentences = [numRoles][]string{
	roleGeneric: {
		"The {comp} logs every decision it makes at debug level, which is useful exactly once a year and expensive the rest of the time.",
		"{Who} keeps saying that the {comp} is fine and the problem is how we use it; after this, most of us agree.",
		"Nobody has touched the {comp} code path for `{key}` since {oldver}, and it shows.",
		"The staging cluster has a tenth of the {noun} of `{env}`, so it rarely reproduces anything interesting.",
		"Looking back at the graphs, {metric} had been drifting upwards for weeks before anyone noticed.",
		"We do not have a good way to replay production {noun} against a test cluster, and that keeps hurting.",
		"The {comp2} is older than most of the team, and its documentation is a wiki page from {year}.",
		"Whenever {metric} and {metric2} disagree, trust the one measured closer to the user.",
		"The {comp} has been the part of {sys} that surprises people most, mostly because its defaults were chosen for a much smaller deployment.",
		"{Who} pointed out that `{key}` still has the value it shipped with in {oldver}, and nobody remembers choosing it.",
		"Most of the {noun} on `{env}` never touch the {comp2}, which is why the problem stayed hidden for so long.",
		"We graph {metric} on the main {sys} dashboard, but the interesting number is the {metric2}, which nobody had looked at in months.",
		"The {comp} and the {comp2} share a thread pool, so trouble in one shows up as latency in the other.",
		"None of this is specific to {sys}; every system that handles {noun} at this volume runs into the same trade-off.",
		"It is tempting to raise `{key}` and move on, but that only moves the {problem} somewhere less visible.",
		"{Who2} has a script that pulls {metric} for every node, and it is the fastest way to see which part of the fleet is affected.",
		"In {year} we handled roughly {big} {noun} a day; the design assumptions date from when it was a tenth of that.",
		"Error `{code}` is the one to search for in the logs; it means the {comp} gave up after {n} attempts.",
		"The behaviour changed in {ver}: before that release, the {comp} retried silently and the error never reached the caller.",
		"{Team} owns the {comp}, and {who} is the person to ask before changing anything about it.",
		"On a quiet day the {comp} uses about {pct} of its budget, which leaves less headroom than the dashboards suggest.",
		"A restart clears the symptom for {dur} or so, which is exactly why it kept coming back.",
		"We keep a copy of the {comp} configuration in the repository, and `{key2}` there is the value production actually runs.",
		"The numbers in this note come from `{env}`; the other regions look similar but smaller.",
	},
	roleSummary: {
		"On {date}, {problem} on `{env}` affected {noun} for {dur} before it was mitigated.",
		"For {dur} on {date}, {metric} on `{env}` was {x} its normal value, and {pct} of {noun} saw errors.",
		"The trigger was a change to `{key}` earlier that week; the underlying cause was the {comp} having no limit of its own.",
		"No data was lost, but {n2} customers noticed and {n} of them opened tickets.",
		"{Who} was on call and declared the incident after the second page.",
		"The {problem} started in the {comp} and spread to the {comp2} within minutes.",
		"It was fixed by reverting to {oldver} and then shipping {ver} with a proper fix a week later.",
		"Users saw slow {noun} rather than failures, which is why detection took as long as it did.",
		"It was not the first time in {year} that the {comp} was involved, but it was the first time customers saw errors.",
		"In short: a temporary setting with no owner and no expiry, and a {comp} that did exactly what it was told.",
	},
	roleImpact: {
		"About {pct} of {noun} on `{env}` failed with `{code}` between the first alert and the mitigation.",
		"Latency for {noun} went from the usual {ms} to several seconds at the worst point.",
		"{N2} tenants were affected; the largest of them retried aggressively and made things worse for everyone else.",
		"Internal dashboards were slow but correct, and no alerts were lost.",
		"Support received {n2} tickets, all of which were answered with the status page link.",
		"The error budget for {month} was gone by the end of the day.",
		"Batch work scheduled for that night ran {dur} late, which nobody outside {team} noticed.",
	},
	roleDetection: {
		"The first signal was {metric} crossing its warning threshold, which opens a ticket rather than a page.",
		"Nobody looked at the ticket for {dur}, because it had fired and resolved itself several times that week.",
		"A customer report in the support channel reached {who} before any page did.",
		"The page that finally fired was on {metric2}, which is a symptom two steps removed from the cause.",
		"We have since added an alert on {metric} sustained for {n2} minutes, routed to {team}.",
		"Detection would have been faster if the {comp} logged `{code}` at warning level instead of debug.",
	},
	roleCause: {
		"Nothing in the {comp} was broken as such; it was doing what `{key}` told it to do, at a scale nobody had tested.",
		"The deploy of {ver} changed the default of `{key2}`, and the release notes did not mention it.",
		"A single tenant sent {x} its usual {noun}, and the {comp} had no per-tenant limit to stop it.",
		"Clock skew between nodes made the {comp2} think its leases had expired when they had not.",
		"The {comp} assumes that `{key}` is at least {val}; with the value we had set, it fell behind and never caught up.",
		"Each retry from the {comp2} added load to the {comp}, so the {problem} fed on itself.",
		"The change to `{key}` was made during a maintenance window to keep things quiet, and nobody set it back afterwards.",
		"A bug in {oldver} meant the {comp} ignored `{key2}` entirely; it had been wrong for months and only mattered under this load.",
		"{Who} traced the slowdown to the {comp}, which was still running with the defaults from {oldver}.",
		"Under normal load the queue in front of the {comp} is nearly empty, so a missing bound never showed.",
		"The real cause was organisational: the {comp} had two owners, which in practice meant none.",
		"Once {metric} passed about {num}, every request to the {comp} waited on a lock held by the {comp2}.",
		"The {problem} was a symptom; the cause was a capacity plan that still assumed the traffic of {year}.",
		"We found `{code}` in the logs of {n} nodes, always a few seconds before {metric} started to climb.",
	},
	roleWentWell: {
		"The runbook for {problem} was current and {who} followed it step by step.",
		"Rolling back to {oldver} took {n} minutes, as the rollback plan said it would.",
		"The {comp} degraded gracefully: {noun} were slow, not lost.",
		"Communication in the incident channel was calm and the status page was updated every half hour.",
		"The per-tenant limits added last year kept the blast radius to `{env}`.",
	},
	rolePlan: {
		"We will enable {action} on `{env}` first, at {pct} of traffic, and watch {metric} for {dur}.",
		"Each step waits for a full day of normal traffic before the next one starts.",
		"The feature sits behind `{key}`, which can be flipped without a restart.",
		"{Who} owns the rollout and {who2} reviews every step before it starts.",
		"If {metric} moves by more than {pct}, we stop and go back one step.",
		"The canary runs {ver} while the rest of the fleet stays on {oldver}.",
		"We expect {metric} to drop by about a third once {action} is everywhere.",
		"Nothing about {action} changes the on-disk format, so going back is only a config change.",
	},
	roleResults: {
		"After the change, {metric} on `{env}` dropped from {num} to about a third of that.",
		"{Metric} stayed flat, which was the point: the change was meant to be invisible.",
		"The {comp} now uses {pct} less CPU at peak, measured over a full week.",
		"We saw `{code}` {n} times during the rollout, all on one node with a known bad disk.",
		"The results held on every region except `{env}`, where traffic is shaped differently.",
		"Peak {metric2} improved by {pct}, and the long tail improved more than the median.",
		"The numbers are good enough that {ver} is now the default for new deployments.",
	},
	roleRollback: {
		"Setting `{key}` back to {val} restores the old behaviour within a minute, no restart needed.",
		"Rolling back means redeploying {oldver}; the data written by {ver} is readable by both.",
		"We practised the rollback on staging twice before starting, and it took {n} minutes each time.",
		"If the rollback itself fails, page {team} and stop all other changes to {sys}.",
	},
	roleContext: {
		"This came up during the {action} work, when {who} noticed that nobody could say what the {comp} would do under twice the load.",
		"Before this, the last real change to the {comp} was in {oldver}.",
		"The scope is `{env}` only; the other regions follow once the numbers hold.",
		"The {comp} was designed in {year} for a fraction of today's {noun}, and several of its assumptions no longer hold.",
		"This review covers the {comp} and its interaction with the {comp2}, prompted by the {problem} last month.",
		"{Who} asked for the review after the third {problem} in a quarter.",
		"Attendees were {person}, {person2} and {person3}; {who} took notes.",
		"The question on the table was whether to keep patching the {comp} or to replace it.",
		"We looked at {n} incidents, {n2} tickets and one long thread in the {slug} channel.",
	},
	roleFindings: {
		"{N2} percent of the {noun} account for almost all of the load on the {comp}.",
		"The retry logic in the {comp2} and in the client both back off, but with the same schedule, so they synchronise.",
		"Alerts on {metric} fired {n2} times last quarter and were acted on {n} times.",
		"The {comp} is fine at the median; the problem is entirely in the p99.",
		"The {comp} spends most of its time waiting on the {comp2}, not doing its own work.",
		"`{key}` is set to {val} on every cluster, including ones where that value makes no sense.",
		"{Metric} correlates with the {problem} better than anything else we graph.",
		"Three of the last {n} incidents started with the same log line: `{code}`.",
		"Nobody on the team could say why `{key2}` has the value it has.",
		"The load test shows the {comp} falling over at about {x} today's peak, which is closer than we thought.",
		"Documentation for the {comp} describes {oldver}; a lot has changed since.",
	},
	roleDiscussion: {
		"{Who} argued that a rewrite would take a quarter and fix problems we do not have yet.",
		"{Who2} preferred a smaller change: bound the queue in front of the {comp} and make `{key}` reloadable.",
		"There was agreement that {metric} is the number to watch, and disagreement about the threshold.",
		"We spent a while on whether {action} would help here; it would, but not with this problem.",
		"The cost of doing nothing is roughly one {problem} a month, each costing the on-call a night.",
		"Someone raised the option of moving the {comp} to its own nodes, which nobody liked but nobody could rule out.",
	},
	roleDecisions: {
		"We will keep the {comp} and add a hard limit in front of it, shipping in {ver}.",
		"`{key}` becomes reloadable, and every temporary change to it gets a ticket with an expiry date.",
		"{Action} is postponed until the {comp} has a load test that runs in CI.",
		"{Who} will write the design for the new limit and circulate it by {date2}.",
		"We agreed to revisit this in {n} months with fresh numbers.",
	},
	roleExplain: {
		"Queues, caches and buffers all trade memory for time, and each of them needs a bound someone chose on purpose.",
		"The failure that matters is rarely the first one; it is the second one, triggered by the recovery from the first.",
		"Measuring the {comp} from the outside tells you what users see; measuring it from the inside tells you why.",
		"If a setting has to be changed during every incident, it should be a feature, not a setting.",
		"Most of what is written about {concept} assumes a single node; with replicas, every rule gets an exception.",
		"A rule of thumb from {team}: if you cannot explain a limit in one sentence, you cannot defend its value either.",
		"Latency and throughput pull in different directions, and the {comp} is where we decide which one wins.",
		"The cheapest fix is usually upstream of where the symptom shows.",
		"The core of {concept} is simple; nearly all of the trouble is in the details.",
		"The {comp} exists because {noun} do not arrive at the rate they can be handled; something has to absorb the difference.",
		"Every design here is a trade between latency for the caller and stability for everyone else.",
		"When the input rate exceeds what the {comp} can sustain, the excess has to wait somewhere, and where it waits decides who notices.",
		"A bounded buffer with a clear rejection signal is almost always better than an unbounded one that hides the problem.",
		"The usual mistake is to treat {metric} as the goal rather than as a symptom.",
		"In {sys}, {concept} shows up mostly in the {comp} and the {comp2}.",
		"The textbook version of {concept} assumes that failures are independent; in practice they arrive together.",
		"Think of the {comp} as a promise about {noun}: it either keeps the promise or says clearly that it cannot.",
		"Most of the interesting behaviour happens at the edges: empty queues, full disks, clocks that disagree.",
		"The simplest correct design is usually a single limit, enforced in one place, with a number someone chose on purpose.",
		"Good defaults matter more than good knobs, because most deployments never change them.",
	},
	roleSignals: {
		"{Metric}, {metric2} and the rate of `{code}` errors are the three numbers worth graphing.",
		"{Metric} is the best single signal, because it maps directly to what users feel.",
		"A slow climb in {metric} over days usually means capacity; a sudden jump usually means a change.",
		"Watch the ratio between {metric} and {metric2}; either one alone is ambiguous.",
		"If `{code}` appears in the logs more than a few times an hour, something upstream has changed.",
	},
	roleTuning: {
		"Start with `{key}` at its default and change one setting at a time, with a day of traffic between changes.",
		"Raising `{key}` helps throughput until the {comp2} becomes the bottleneck; past that point it only adds latency.",
		"`{key2}` is the setting most often set wrong: too high hides problems, too low causes them.",
		"On clusters with more than {n2} nodes, `{key}` = {val} has worked well for us.",
		"Never tune during an incident unless the runbook says so; write the idea down and try it on staging.",
	},
	roleReference: {
		"Settings are read at startup from `{slug}.toml`, then from the environment, then from flags; the last one wins.",
		"Ask {team} before adding anything to this page, so the names stay consistent.",
		"Examples on this page use the `{env}` cluster; the values there are not defaults.",
		"Every entry names the release it appeared in, so you can tell whether a cluster running an older version has it.",
		"Search this page for an error code or a key name; the headings are only a rough grouping.",
		"Names in `monospace` are literal: type them exactly as shown, dots and underscores included.",
		"Durations take a unit suffix unless the name already ends in its unit, in which case the value is a plain integer.",
		"Default means the value compiled into the release named at the top of the page, not what any particular cluster runs today.",
		"Anything marked deprecated still works, logs a warning at startup, and goes away in the next minor release.",
		"Where this page and the source code disagree, the source code is right and this page has a bug.",
		"Most settings can be changed with a reload; the ones that need a restart say so.",
		"This page is regenerated from the {sys} source on every release and then edited by hand.",
	},
	rolePersonalLog: {
		"Started late, around {n} in the afternoon, which was a mistake.",
		"Halfway through I realised I had forgotten the {item2} and had to start that part again.",
		"Timed everything with my phone this time, which made the notes much more useful.",
		"Made the {item} again on {weekday}, this time with {qty} of {item2}.",
		"It came out {adj}, which I think was mostly down to {technique}.",
		"{Friend} came along and suggested using the {tool}, which helped more than I expected.",
		"Spent {dur} on it in total, most of it waiting.",
		"Went to {place} first for the {item2}; they had run out, so I improvised.",
		"Wrote the numbers down this time: {qty}, then {qty2} an hour later.",
		"The {item} is the part I keep getting wrong, and today was no exception.",
		"Compared with the attempt in {month}, everything went faster and the result was {adj}.",
		"I skipped {technique} because I was short on time, and it showed.",
		"The {tool} made a real difference once I stopped fighting it.",
	},
	rolePersonalProblem: {
		"{Problem} again, and this time I had followed the plan exactly.",
		"I blamed the {tool} at first, but it was {problem} all along.",
		"The main problem was {problem}; it happened twice this month.",
		"I think {problem} came from rushing {technique}.",
		"Last time it was {problem} too, so it is probably the method, not bad luck.",
		"{Friend} thinks the {item} was the cause; I am less sure.",
		"Checked everything I could think of and still got {problem}.",
	},
	rolePersonalNext: {
		"Next time: less {item2}, more patience with {technique}.",
		"Try {qty} instead and see whether it changes anything.",
		"Ask {friend} to show me how they handle the {item}.",
		"Buy a better {tool} before the next attempt.",
		"Keep a proper log, with times and amounts, so I can compare.",
	},
	rolePersonalNotes: {
		"Most guides skip the part about the {item}, which is where everything goes wrong for me.",
		"Cheap {tool}s are a false economy; I have bought three.",
		"Keeping these notes has helped more than any book on {subject}.",
		"Everything about {subject} seems to come down to timing and temperature.",
		"The {item} matters more than the {item2}, whatever the books say.",
		"{Technique} is worth the extra {dur}.",
		"Good source on {subject}: the notes {friend} sent me in {year}.",
		"The {tool} from {place} is the one to get; the cheap one does not last.",
		"I keep rediscovering that {technique} fixes most of my problems with the {item}.",
	},
	rolePersonalPlan: {
		"The plan for {month}: {item} every week, and one longer attempt at the {item2}.",
		"Keep the first week easy and see how it goes.",
		"Go back to {place} at least twice before deciding anything.",
		"Book {place} early; it fills up.",
		"If the first week goes well, add {technique}.",
		"Leave a spare weekend in case of {problem}.",
	},
}

// linkSentences carry a wikilink; [[L]] is replaced with the link itself.
var linkSentences = []string{
	"See [[L]] for the background.",
	"The mechanics are in [[L]].",
	"{Who} wrote up a related case in [[L]].",
	"This is close to what happened in [[L]].",
	"The relevant settings are described in [[L]].",
	"Compare [[L]], which had the same shape.",
	"For the longer explanation, read [[L]] first.",
	"We followed the steps in [[L]].",
	"There is more on this in [[L]].",
	"The earlier discussion is in [[L]].",
}

var personalLinkSentences = []string{
	"More in [[L]].",
	"Same as last time, see [[L]].",
	"The earlier notes are in [[L]].",
	"I wrote about this in [[L]].",
	"Compare [[L]].",
}

// Bullet items for lists.
var (
	timelineEvents = []string{
		"first alert fires: {metric} above threshold on `{env}`",
		"{who} acknowledges the page and starts looking at the {comp}",
		"`{key}` lowered from {val} to {val2} to shed load",
		"{who} notices `{code}` in the {comp} logs on {n} nodes",
		"incident declared; {who} is incident lead",
		"rollback to {oldver} starts",
		"{comp} restarted on {n} nodes, one at a time",
		"status page updated",
		"{metric} back under its warning threshold",
		"{who2} confirms {noun} are flowing normally again",
		"incident closed, follow-ups filed",
		"customer reports in the support channel about slow {noun}",
	}
	followUps = []string{
		"Add an alert on {metric} sustained for {n2} minutes",
		"Document `{key}` in the configuration reference",
		"Make `{key}` reloadable without a restart",
		"Write a runbook for {problem}",
		"Add a load test for the {comp} to CI",
		"Put an expiry date on every temporary config change",
		"Log `{code}` at warning level, not debug",
		"Review the defaults of the {comp} before {ver}",
		"Bound the queue in front of the {comp2}",
		"Check every cluster for the same value of `{key2}`",
	}
	antiPatterns = []string{
		"Raising `{key}` during an incident because the limit was hit. The limit is doing its job.",
		"Retrying immediately on `{code}`. That turns a slowdown into {problem}.",
		"Timeouts in the {comp} longer than the caller's timeout; the work completes after nobody is waiting for it.",
		"Treating {metric} as a target instead of a signal.",
		"Restarting the {comp} as a fix. It clears the symptom and destroys the evidence.",
		"Changing two settings at once and keeping whichever result looked better.",
	}
	checklistItems = []string{
		"Confirm which version of {sys} is running: {ver} or older",
		"Check {metric} on the dashboard for the last {n} hours",
		"Look for `{code}` in the {comp} logs",
		"Compare `{key}` with the value in the repository",
		"Tell {team} before changing anything",
		"Write down what you changed, and when",
	}
	personalItems = []string{
		"{qty} {item}",
		"{item2}, about {qty}",
		"the {tool}",
		"{item} from {place}",
		"spare {item2}",
	}
)
