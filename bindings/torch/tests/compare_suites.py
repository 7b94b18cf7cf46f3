"""Compares runs of torch_distributed_suite.py (pytest --junitxml files).

    compare_suites.py gated-list LOOM.xml GLOO.xml
        prints the tests gloo passed that loom skipped, for the gated run
    compare_suites.py report LOOM.xml GLOO.xml [GATED.xml]
        prints what each run passed, failed and skipped, and every test
        gloo passed that loom passed in neither run; exits 1 if any

A test "passes on loom" when it passed in the loom run or, skipped there
because the suite opens it to gloo alone, in the gated run.
"""
import sys
import xml.etree.ElementTree as ElementTree


def outcomes(path):
    """{test name: ("passed" | "failed" | "skipped", message)}"""
    result = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", next(iter((child.get("message") or "").splitlines()), "")
            elif child.tag == "skipped" and outcome != "failed":
                outcome, message = "skipped", child.get("message") or ""
        result[case.get("name")] = (outcome, message)
    return result


def count(run):
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    for outcome, _ in run.values():
        totals[outcome] += 1
    return f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped"


def gated_list(loom, gloo):
    return sorted(name for name, (outcome, _) in gloo.items()
                  if outcome == "passed" and loom.get(name, ("missing",))[0] == "skipped")


def main(argv):
    if len(argv) < 3 or argv[0] not in ("gated-list", "report"):
        raise SystemExit(__doc__)
    loom, gloo = outcomes(argv[1]), outcomes(argv[2])
    if argv[0] == "gated-list":
        print("\n".join(gated_list(loom, gloo)))
        return 0
    # Only the tests gated to gloo count from the gated run: it may have run
    # others, which must pass in the loom run itself.
    opened = set(gated_list(loom, gloo))
    gated = {name: outcome for name, outcome in (outcomes(argv[3]) if len(argv) > 3 else {}).items()
             if name in opened}
    print(f"gloo:  {count(gloo)}")
    print(f"loom:  {count(loom)}")
    if gated:
        print(f"gated (opened to gloo alone, run on loom): {count(gated)}")
    missing = []
    for name, (outcome, _) in sorted(gloo.items()):
        if outcome != "passed":
            continue
        if loom.get(name, ("missing",))[0] == "passed" or gated.get(name, ("missing",))[0] == "passed":
            continue
        why = gated.get(name) if name in gated else loom.get(name, ("missing", "not run"))
        missing.append(f"  {name}: {why[0]} on loom ({why[1][:160]})")
    failed_on_gloo = sorted(name for name, (outcome, _) in gloo.items() if outcome == "failed")
    if failed_on_gloo:
        print(f"failed on gloo too ({len(failed_on_gloo)}): " + ", ".join(failed_on_gloo))
    if missing:
        print(f"passed on gloo, not on loom ({len(missing)}):")
        print("\n".join(missing))
        return 1
    print("every test that passed on gloo passed on loom")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
