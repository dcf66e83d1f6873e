#!/usr/bin/python3
"""Checks the answers a chaos run recorded against what the database holds (bench/chaos).

  verify.py --answers=FILE [--answers=FILE…] --rows=FILE --jobs=FILE [--allow-failed]

--answers: receiptd-loadgen --record files ("INDEX TOKEN STATUS ID AT_MS", tab separated).
--rows: the purchase orders, "TOKEN ID STATE FRAUD_REASON" (tab separated).
--jobs: the validation jobs left, "RECORD_KIND RECORD_ID" (tab separated).

Guarantees (exit 1 when one is broken):
- every upload answered 200/206/402 is stored exactly once, under the answered id;
- 200 -> validated, 402 -> rejected with a fraud reason, 206 -> a final state now
  (validated; failed only with --allow-failed), never rejected;
- 402 only for the uploads made to be fraud (token holding "-fraud-"), and those never
  200/206: no fraud verdict caused by the chaos;
- nothing pending is left, no job is left, no record has two jobs;
- no answer outside 200/206/402/503 (0: connection failed with the upload out, -1:
  unanswered at the end, are counted, not errors).
Prints one "FIGURE key=value" line per figure and one "VIOLATION …" line per broken
guarantee (the first 10 of each kind).
"""
import argparse
import collections
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", action="append", required=True)
    ap.add_argument("--rows", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--allow-failed", action="store_true")
    a = ap.parse_args()

    answers = []  # (token, status, id)
    for path in a.answers:
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 4:
                    answers.append((parts[1], int(parts[2]), parts[3]))

    rows = collections.defaultdict(list)  # token -> [(id, state, fraud_reason)]
    with open(a.rows) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3:
                rows[parts[0]].append((parts[1], parts[2], parts[3] if len(parts) > 3 else ""))

    jobs = collections.Counter()
    with open(a.jobs) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                jobs[(parts[0], parts[1])] += 1

    violations = collections.defaultdict(list)

    def violate(kind, text):
        violations[kind].append(text)

    statuses = collections.Counter(s for _, s, _ in answers)
    acknowledged = [x for x in answers if x[1] in (200, 206, 402)]
    lost = duplicates = wrong_id = wrong_state = 0
    final_206 = collections.Counter()
    for token, status, rid in acknowledged:
        fraud = "-fraud-" in token
        stored = rows.get(token, [])
        if not stored:
            lost += 1
            violate("lost", f"{token} answered {status} id {rid}: not stored")
            continue
        if len(stored) > 1:
            duplicates += 1
            violate("duplicate", f"{token}: {len(stored)} records")
        sid, state, reason = stored[0]
        if sid != rid:
            wrong_id += 1
            violate("wrong_id", f"{token} answered {status} id {rid}, stored as {sid}")
        if status == 200:
            ok = state == "validated" and not fraud
        elif status == 402:
            ok = state == "rejected" and reason != "" and fraud
        else:  # 206
            final_206[state] += 1
            ok = not fraud and (state == "validated" or (a.allow_failed and state == "failed"))
        if not ok:
            wrong_state += 1
            violate("wrong_state",
                    f"{token} answered {status}: stored {state} ({reason or 'no fraud reason'})"
                    f"{', made to be fraud' if fraud else ''}")

    all_rows = [(t, r) for t, rs in rows.items() for r in rs]
    pending = sum(1 for _, r in all_rows if r[1] == "pending")
    if pending:
        for t, r in all_rows:
            if r[1] == "pending":
                violate("pending", f"{t} ({r[0]}) still pending")
    # Records the answers do not know of (connection failed or unanswered): final too.
    fraud_from_chaos = sum(1 for t, r in all_rows if r[1] == "rejected" and "-fraud-" not in t)
    for t, r in all_rows:
        if r[1] == "rejected" and "-fraud-" not in t:
            violate("fraud_from_chaos", f"{t} ({r[0]}) rejected: {r[2]}")
    double_jobs = sum(1 for n in jobs.values() if n > 1)
    for key, n in jobs.items():
        if n > 1:
            violate("double_job", f"{key}: {n} jobs")
    jobs_left = sum(jobs.values())
    if jobs_left:
        violate("jobs_left", f"{jobs_left} jobs left")
    odd = {s: n for s, n in statuses.items() if s not in (200, 206, 402, 503, 0, -1)}
    for s, n in odd.items():
        violate("odd_status", f"{n} answers {s}")

    def fig(k, v):
        print(f"FIGURE {k}={v}")

    fig("sent", len(answers))
    fig("statuses", ",".join(f"{s}:{n}" for s, n in sorted(statuses.items())))
    fig("acknowledged", len(acknowledged))
    fig("connection_errors", statuses.get(0, 0))
    fig("unanswered", statuses.get(-1, 0))
    fig("records", len(all_rows))
    # Uploads whose connection died with them out (status 0) that were committed anyway:
    # the client retries them and gets the same record (a re-upload).
    fig("stored_unanswered", sum(1 for t, s, _ in answers if s == 0 and t in rows))
    fig("records_validated", sum(1 for _, r in all_rows if r[1] == "validated"))
    fig("records_rejected", sum(1 for _, r in all_rows if r[1] == "rejected"))
    fig("records_failed", sum(1 for _, r in all_rows if r[1] == "failed"))
    fig("answered_206_now", ",".join(f"{s}:{n}" for s, n in sorted(final_206.items())) or "none")
    fig("duplicates", duplicates)
    fig("lost", lost)
    fig("wrong_id", wrong_id)
    fig("wrong_state", wrong_state)
    fig("fraud_from_chaos", fraud_from_chaos)
    fig("pending_left", pending)
    fig("jobs_left", jobs_left)
    fig("double_jobs", double_jobs)
    for kind, texts in violations.items():
        for t in texts[:10]:
            print(f"VIOLATION {kind}: {t}")
        if len(texts) > 10:
            print(f"VIOLATION {kind}: … {len(texts) - 10} more")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
