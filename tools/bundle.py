#!/usr/bin/env python3
"""Writes a platform's upload-ready bundle for one assignment: `cudalab bundle`.

The cudalab program checks the command line and the course file (the
assignment exists; its labs, in the course's order, come as --labs) and runs
this script for the files:

  gradescope    OUT/<assignment>-gradescope.zip: Gradescope's autograder zip,
                setup.sh and run_autograder at its root (wrappers that set the
                assignment and the course file, then run grader/autograder/'s),
                and the tree that grades the assignment: the build files, the
                cudalab script, course/, harness/, grader/, simt/, tools/,
                labs/ and solutions/ of the assignment's labs and of the labs
                they reference, and a course.toml of this assignment alone.
  prairielearn  OUT/questions/<assignment>_<lab>/ for each lab: info.json
                (its uuid derived from the course, the assignment and the lab,
                so a new bundle keeps each question's identity),
                question.html with a file editor per student file, the
                skeletons, and tests/course.toml (CPU mode, this lab).
  classroom     OUT/.github/workflows/classroom.yml: tools/classroom.yml with
                CUDALAB_ASSIGNMENT set.

  bundle.py --source ROOT --course FILE --assignment NAME --labs L1,L2
            --platform gradescope|prairielearn|classroom --out DIR [--image IMAGE]
"""
import argparse
import datetime
import html
import json
import os
import re
import shutil
import sys
import uuid
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    sys.exit("bundle.py needs Python 3.11 or newer (tomllib)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from release import JUNK, JUNK_DIR  # noqa: E402  what is never copied (caches, objects, build folders)

# The Gradescope zip: what grades an assignment, relative to the source root.
# Not tests/ (the framework's own; variants and the gallery are solutions),
# docs/, handouts/, calibration/, results or build folders, nor the labs
# outside the assignment. simt/tests/ holds a tiled matmul: left out as from
# the student release.
GRADESCOPE_FILES = ["cudalab", "meson.build", "meson_options.txt", "labs/meson.build"]
GRADESCOPE_FOLDERS = ["course", "harness", "grader", "simt", "tools"]
GRADESCOPE_EXCLUDED = {"simt/tests"}
# One date for every entry: the same tree gives the same zip, byte for byte.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)

# The example question, whose externalGradingOptions (image, entrypoint,
# timeout) every generated question takes: one place to change them.
EXAMPLE_QUESTION = os.path.join("grader", "autograder", "prairielearn", "questions", "lab03_tiling")
# PrairieLearn kills a job at its timeout without a result; the grader's own
# build limit, under it, gives one that says the build was cut off.
PL_BUILD_TIMEOUT_S = 300
# The namespace of the questions' uuids (uuid5): a question's uuid is a
# function of the course's title, the assignment and the lab.
QUESTION_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "cudalab:prairielearn-question")

CLASSROOM_ASSIGNMENT_LINE = '  CUDALAB_ASSIGNMENT: ""\n'


def fail(msg):
    sys.exit(f"cudalab bundle: {msg}")


def load_toml(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def lab_manifest(src, lab):
    return load_toml(os.path.join(src, "labs", lab, "lab.toml"))["lab"]


def referenced_labs(src, labs):
    """The labs whose solutions the labs' tests compile as references
    (lab.toml's references), and theirs, in sorted order."""
    seen, todo = set(labs), list(labs)
    while todo:
        for r in lab_manifest(src, todo.pop()).get("references", []):
            if r not in seen:
                seen.add(r)
                todo.append(r)
    return sorted(seen - set(labs))


# --- TOML, for the course files a bundle carries ------------------------------


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a TOML basic string
    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"no TOML for {v!r}")


def assignment_course(course, assignment, labs, source):
    """The course file of one assignment: its labs alone (and their weights),
    the course's grading settings, the assignment itself. A course file that
    names labs the bundle does not carry would not load there."""
    grading = course.get("grading", {})
    weights = {lab: w for lab, w in course.get("weights", {}).items() if lab in labs}
    decl = next(a for a in course.get("assignment", []) if a.get("name") == assignment)
    out = [f"# The course file of assignment {assignment}, written by `cudalab bundle` from\n",
           f"# {source}: its labs alone, the course's grading settings (with the\n",
           "# grading seed: this bundle is the course staff's, never the students').\n\n",
           "[course]\n",
           f"title = {toml_value(course.get('course', {}).get('title', 'cudalab'))}\n",
           f"labs = {toml_value(labs)}\n"]
    if weights:
        out += ["\n[weights]\n"] + [f"{json.dumps(lab)} = {toml_value(w)}\n" for lab, w in weights.items()]
    if grading:
        out += ["\n[grading]\n"] + [f"{k} = {toml_value(v)}\n" for k, v in grading.items()]
    out += ["\n[[assignment]]\n", f"name = {toml_value(assignment)}\n", f"labs = {toml_value(labs)}\n"]
    out += [f"{k} = {toml_value(v)}\n" for k, v in decl.items() if k in ("due", "late")]
    return "".join(out)


# --- Gradescope ----------------------------------------------------------------

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope's setup for assignment {assignment} (written by `cudalab bundle`):
# Gradescope runs it once, as root, when it builds the autograder's image, from
# /autograder/source (this zip's contents). The work is grader/autograder/setup.sh's,
# with this assignment's course file.
set -euo pipefail
here=$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)
export CUDALAB_ROOT=$here
export CUDALAB_COURSE=$here/course.toml
export CUDALAB_ASSIGNMENT={assignment}
exec "$here/grader/autograder/setup.sh" "$@"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope's entry point for assignment {assignment} (written by `cudalab bundle`):
# Gradescope copies it to /autograder/run_autograder, beside source/ (this zip's
# contents), and runs it for each submission. The work is
# grader/autograder/run_autograder's (AUTOGRADER_ROOT, CUDALAB_GRADE_WORK_DIR
# as there), with this assignment and its course file.
set -uo pipefail
here=$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)
# Where Gradescope put it, the tree is source/; run where the zip was unpacked, here.
if [ -x "$here/source/grader/autograder/run_autograder" ]; then src=$here/source; else src=$here; fi
export AUTOGRADER_ROOT=${{AUTOGRADER_ROOT:-/autograder}}
export CUDALAB_ROOT=$src
export CUDALAB_COURSE=$src/course.toml
export CUDALAB_ASSIGNMENT={assignment}
exec "$src/grader/autograder/run_autograder" "$@"
"""


def gradescope_entries(src, labs):
    """(path in the zip, path here) of the tree that grades `labs`."""
    entries = []
    for rel in GRADESCOPE_FILES:
        if os.path.isfile(os.path.join(src, rel)):
            entries.append((rel, os.path.join(src, rel)))
    tops = GRADESCOPE_FOLDERS + [os.path.join(top, lab) for top in ("labs", "solutions") for lab in labs]
    for top in tops:
        if not os.path.isdir(os.path.join(src, top)):
            fail(f"{os.path.join(src, top)} is not there: the bundle needs it")
        for dirpath, dirnames, filenames in os.walk(os.path.join(src, top)):
            reldir = os.path.relpath(dirpath, src)
            dirnames[:] = sorted(d for d in dirnames if os.path.join(reldir, d) not in GRADESCOPE_EXCLUDED
                                 and not JUNK_DIR.search(d) and d != "results")
            for name in sorted(filenames):
                if not JUNK.search(name):
                    entries.append((os.path.join(reldir, name), os.path.join(dirpath, name)))
    return entries


def zip_add(z, name, data, mode):
    info = zipfile.ZipInfo(name, ZIP_DATE)
    info.external_attr = (0o100000 | mode) << 16  # a regular file with its Unix permissions
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)


def bundle_gradescope(args, course, labs):
    src = args.source
    refs = referenced_labs(src, labs)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.assignment}-gradescope.zip")
    entries = gradescope_entries(src, labs + refs)
    with zipfile.ZipFile(path + ".tmp", "w") as z:
        for name, script in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            zip_add(z, name, script.format(assignment=args.assignment), 0o755)
        zip_add(z, "course.toml", assignment_course(course, args.assignment, labs, args.course), 0o644)
        for name, here in entries:
            with open(here, "rb") as f:
                zip_add(z, name, f.read(), 0o755 if os.access(here, os.X_OK) else 0o644)
    os.replace(path + ".tmp", path)

    cpu_mode = course.get("grading", {}).get("cpu_mode") is True
    print(f"cudalab bundle: wrote {path} ({len(entries) + 3} files)")
    print(f"  assignment {args.assignment}: {', '.join(labs)}"
          + (f"; the solutions of {', '.join(refs)} too, which its tests compile as references" if refs else ""))
    print("  setup.sh and run_autograder at the zip's root, the assignment and its course file (course.toml,")
    print("  with the grading seed) baked in. In Gradescope: the assignment's Configure Autograder, upload it.")
    print("  Gradescope's hosted runners have no GPU: the speed checks cannot run there.")
    if cpu_mode:
        print("  The course file sets cpu_mode = true: each submission gets its correctness checks at once, in")
        print("  CPU mode; the speed checks are reported not run (0 points). The official grade, speed included,")
        print("  comes from a batch on the course's GPU after the deadline (docs/course.md).")
    else:
        print("  WARNING: the course file does not set cpu_mode = true, so on Gradescope's hosted runners every")
        print("  check is reported \"not run\" and scores 0. Either set [grading] cpu_mode = true (the correctness")
        print("  checks in CPU mode, the official grade from a GPU batch after the deadline), or run")
        print("  grader/autograder/Dockerfile's image on a GPU runner (grader/autograder/README.md).")


# --- PrairieLearn ----------------------------------------------------------------

def markdown_inline(text):
    """A handout paragraph as HTML: escaped, with its `code`, **strong** and *em*."""
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    return re.sub(r"\*([^*]+)\*", r"<em>\1</em>", out)


def handout_intro(src, lab):
    """The first paragraph of the lab's handout (handouts/<lab>.md), or None."""
    try:
        with open(os.path.join(src, "handouts", f"{lab}.md")) as f:
            text = f.read()
    except OSError:
        return None
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if para and not para.startswith("#"):
            return " ".join(line.strip() for line in para.splitlines())
    return None


def lab_number(lab):
    m = re.match(r"(\d+)_", lab)
    return int(m.group(1)) if m else None


def question_title(lab, manifest):
    n = lab_number(lab)
    return f"Lab {n}: {manifest['title']}" if n is not None else manifest["title"]


QUESTION_HTML = """\
<pl-question-panel>
{intro}  <p>
    Complete {files}{todo}. Your file{s} start{s_verb} from the lab's skeleton.
  </p>
  <p>
    Each submission is graded at once on PrairieLearn's grader, which has no GPU: your code runs in
    cudalab's CPU mode, and only the correctness checks count there. The checks of speed need a GPU;
    their points come later, when the course staff grade the submissions on a GPU. A submission that
    does not compile is not graded: it costs no attempt, and the compiler's message is shown below.
  </p>
{editors}</pl-question-panel>

<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""

ACE_MODES = {".cu": "ace/mode/c_cpp", ".cuh": "ace/mode/c_cpp", ".cpp": "ace/mode/c_cpp", ".h": "ace/mode/c_cpp",
             ".hpp": "ace/mode/c_cpp", ".c": "ace/mode/c_cpp", ".py": "ace/mode/python"}

QUESTION_COURSE = """\
# The course file of this one question (assignment {assignment}, lab {lab}), written
# by `cudalab bundle`. PrairieLearn copies the question's tests/ folder to
# /grade/tests/ (students never see it) and run_prairielearn grades with
# /grade/tests/course.toml.
#
# PrairieLearn's hosted graders have no GPU: cpu_mode = true grades the
# correctness checks there, in CPU mode, as immediate feedback; the speed checks
# are not run and give 0 points. The official grade, speed included, comes from
# a batch on a GPU after the deadline, with the course's own course file.

[course]
title = {title}
# Only the lab this question asks for: the score is out of its points alone.
labs = {labs}

[grading]
# The course's seed: this feedback and the GPU batch test the same inputs.
{seed}cpu_mode = true
# Under externalGradingOptions.timeout (info.json): past it PrairieLearn kills
# the job and shows no result, where a build cut off by the grader is a result
# that says so.
build_timeout_s = {build_timeout_s}
"""


def bundle_prairielearn(args, course, labs):
    src = args.source
    with open(os.path.join(src, EXAMPLE_QUESTION, "info.json")) as f:
        example = json.load(f)
    ext = dict(example["externalGradingOptions"])
    if args.image:
        ext["image"] = args.image
    title = course.get("course", {}).get("title", "cudalab")
    grading = course.get("grading", {})
    seed = f"seed = {grading['seed']}\n" if "seed" in grading else ""
    build_timeout = grading.get("build_timeout_s", 600)
    build_timeout = min(build_timeout, PL_BUILD_TIMEOUT_S, ext.get("timeout", 30) - 30)
    qroot = os.path.join(args.out, "questions")
    written = []
    for lab in labs:
        manifest = lab_manifest(src, lab)
        name = f"{args.assignment}_{lab}"
        qdir = os.path.join(qroot, name)
        shutil.rmtree(qdir, ignore_errors=True)  # the question's own folder, written again whole
        os.makedirs(os.path.join(qdir, "tests"))
        n = lab_number(lab)
        info = {
            "uuid": str(uuid.uuid5(QUESTION_NAMESPACE, f"{title}\n{args.assignment}\n{lab}")),
            "title": question_title(lab, manifest),
            "topic": example.get("topic", title),
            "tags": ["cudalab", args.assignment] + ([f"lab{n:02d}"] if n is not None else []),
            "type": "v3",
            "singleVariant": True,
            "gradingMethod": "External",
            "comment": f"Written by `cudalab bundle --assignment {args.assignment} --platform prairielearn`: "
                       "bundle again rather than edit (the uuid stays the same).",
            "externalGradingOptions": ext,
        }
        with open(os.path.join(qdir, "info.json"), "w") as f:
            json.dump(info, f, indent=2)
            f.write("\n")
        files = manifest["student_files"]
        skeleton_text = ""
        for name_ in files:
            shutil.copyfile(os.path.join(src, "labs", lab, name_), os.path.join(qdir, name_))
            with open(os.path.join(src, "labs", lab, name_), errors="replace") as f:
                skeleton_text += f.read()
        tags = sorted(set(re.findall(r"TODO\(lab\d+\)", skeleton_text)))
        intro = handout_intro(src, lab)
        editors = "".join(
            f'  <pl-file-editor file-name="{html.escape(f)}" source-file-name="{html.escape(f)}"'
            + (f' ace-mode="{ACE_MODES[os.path.splitext(f)[1]]}"' if os.path.splitext(f)[1] in ACE_MODES else "")
            + ">\n  </pl-file-editor>\n" for f in files)
        with open(os.path.join(qdir, "question.html"), "w") as f:
            f.write(QUESTION_HTML.format(
                intro=f"  <p>\n    {markdown_inline(intro)}\n  </p>\n" if intro else "",
                files=" and ".join(f"<code>{html.escape(x)}</code>" for x in files),
                todo=(": every " + " and ".join(f"<code>{t}</code>" for t in tags)
                      + " comment says what that part must do and what you may assume") if tags else "",
                s="s" if len(files) > 1 else "", s_verb="" if len(files) > 1 else "s", editors=editors))
        with open(os.path.join(qdir, "tests", "course.toml"), "w") as f:
            f.write(QUESTION_COURSE.format(assignment=args.assignment, lab=lab,
                                           title=toml_value(f"{title}: {args.assignment}, lab {lab} on PrairieLearn"),
                                           labs=toml_value([lab]), seed=seed, build_timeout_s=toml_value(build_timeout)))
        written.append(qdir)
    print(f"cudalab bundle: wrote {len(written)} PrairieLearn question(s) for assignment {args.assignment}:")
    for q in written:
        print(f"  {q}")
    print("  Copy them into your PrairieLearn course's questions/ (or bundle with --out at the course's folder),")
    print(f"  with the autograder image at {ext.get('image')}"
          + ("" if args.image else " (--image names yours: where you pushed grader/autograder/Dockerfile's)") + ".")
    print("  PrairieLearn's graders have no GPU: each question grades its correctness checks in CPU mode")
    print("  (tests/course.toml sets cpu_mode = true); the speed checks count in the GPU batch after the deadline.")


# --- GitHub Classroom --------------------------------------------------------------

def bundle_classroom(args, course, labs):
    with open(os.path.join(args.source, "tools", "classroom.yml")) as f:
        text = f.read()
    if text.count(CLASSROOM_ASSIGNMENT_LINE) != 1:
        fail(f"tools/classroom.yml has no line {CLASSROOM_ASSIGNMENT_LINE.strip()!r} to set the assignment in")
    text = text.replace(CLASSROOM_ASSIGNMENT_LINE, f"  CUDALAB_ASSIGNMENT: {json.dumps(args.assignment)}\n")
    path = os.path.join(args.out, ".github", "workflows", "classroom.yml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    print(f"cudalab bundle: wrote {path} for assignment {args.assignment} ({', '.join(labs)})")
    print("  Put it at .github/workflows/classroom.yml in the assignment's template repository (made with")
    print("  `cudalab release`), replacing the release's, which grades every lab.")
    print("  Job run-autograding-tests: the correctness checks in CPU mode on GitHub's runners, the points to")
    print("  Classroom. Job gpu-speed-checks: every check on the course's self-hosted runner labelled gpu, only")
    print("  where the repository or organization variable CUDALAB_GPU_RUNNER is 'true' (docs/course.md).")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True)
    ap.add_argument("--course", required=True)
    ap.add_argument("--assignment", required=True)
    ap.add_argument("--labs", required=True, help="the assignment's labs, in the course's order, comma-separated")
    ap.add_argument("--platform", required=True, choices=["gradescope", "prairielearn", "classroom"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--image", default="")
    args = ap.parse_args()
    args.source = os.path.abspath(args.source)
    course = load_toml(args.course)
    labs = [lab for lab in args.labs.split(",") if lab]
    {"gradescope": bundle_gradescope, "prairielearn": bundle_prairielearn,
     "classroom": bundle_classroom}[args.platform](args, course, labs)


if __name__ == "__main__":
    main()
