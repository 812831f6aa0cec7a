#!/usr/bin/env python3
"""The PrairieLearn example questions (grader/autograder/prairielearn/questions/*/)
are questions PrairieLearn accepts and cudalab grades, without PrairieLearn
or a build:

  - info.json is valid against PrairieLearn's own schema of it
    (schemas/prairielearn-question-info.json, written from its documentation: schemas/README.md),
    checked by the small JSON Schema validator below, and meets the rule
    PrairieLearn adds when it syncs (externalGradingOptions with
    gradingMethod "External"); it is externally graded by run_prairielearn at
    the path the image (grader/autograder/Dockerfile) puts it, within
    PrairieLearn's 600 s ceiling;
  - question.html submits exactly the student files of the labs its
    tests/course.toml grades (lab.toml's student_files), shows the grader's
    results, and starts the editor from the lab's skeleton, a byte-for-byte
    copy of labs/<lab>/<file>;
  - tests/course.toml grades those labs in CPU mode (PrairieLearn's hosted
    graders have no GPU) with the course's grading seed, and its build limit
    ends before PrairieLearn's timeout does.

The validator is tested too: info.json documents it must refuse.

  test_prairielearn_question.py SOURCE_ROOT [QUESTIONS_DIR [COURSE_FILE]]

QUESTIONS_DIR (default: the examples' folder) holds other questions to hold to
the same rules, as `cudalab bundle --platform prairielearn` writes them
(tests/grading/test_bundle.py), and COURSE_FILE (default SOURCE_ROOT's
course.toml) is the course file whose grading seed they carry.
"""
import copy
import html.parser
import json
import os
import re
import sys
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

SRC = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
QUESTIONS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(SRC, "grader", "autograder", "prairielearn", "questions")
COURSE_FILE = sys.argv[3] if len(sys.argv) > 3 else os.path.join(SRC, "course.toml")
ENTRYPOINT = "/autograder/source/grader/autograder/run_prairielearn"
IMAGE_ROOT = "/autograder/source/"  # where grader/autograder/Dockerfile copies the checkout
PL_MAX_TIMEOUT_S = 600  # PrairieLearn's externalGradingMaximumTimeout (docs: externalGrading.md)


# --- a JSON Schema (draft-07) validator for the keywords PrairieLearn's schema uses

ANNOTATIONS = {"$schema", "title", "description", "default", "deprecated", "definitions", "format"}
ASSERTIONS = {"$ref", "type", "enum", "properties", "additionalProperties", "required", "items", "maxItems",
              "minLength", "maxLength", "pattern", "minimum", "maximum", "allOf", "anyOf", "propertyNames"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(value, schema, root, path="$"):
    """The list of errors of `value` against `schema` (empty: valid). Raises
    on a keyword it does not know, so that a newer schema is not half-checked.
    `format` is an annotation here, as in draft-07 by default (the uuid
    pattern beside it is checked)."""
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{path}: no value is allowed here"]
    unknown = set(schema) - ANNOTATIONS - ASSERTIONS
    if unknown:
        raise ValueError(f"{path}: the validator does not know the keywords {sorted(unknown)}")
    errors = []
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"{path}: only local $ref is supported, not {ref}")
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        errors += validate(value, target, root, path)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[t](value) for t in types):
            return errors + [f"{path}: {json.dumps(value)[:60]} is not of type {'/'.join(types)}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {json.dumps(value)} is not one of {schema['enum']}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} is below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} is above {schema['maximum']}")
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                errors += validate(item, schema["items"], root, f"{path}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{path}: the required property {name!r} is missing")
        for name, item in value.items():
            if "propertyNames" in schema:
                errors += validate(name, schema["propertyNames"], root, f"{path} (the name {name!r})")
            if name in props:
                errors += validate(item, props[name], root, f"{path}.{name}")
            elif "additionalProperties" in schema:
                extra = schema["additionalProperties"]
                if extra is False:
                    errors.append(f"{path}: the property {name!r} is not allowed (known: {', '.join(props)})")
                else:
                    errors += validate(item, extra, root, f"{path}.{name}")
    for sub in schema.get("allOf", []):
        errors += validate(value, sub, root, path)
    if "anyOf" in schema:
        tries = [validate(value, sub, root, path) for sub in schema["anyOf"]]
        if all(tries):
            errors.append(f"{path}: matches none of anyOf ({'; '.join(t[0] for t in tries)})")
    return errors


def pl_sync_errors(info):
    """What PrairieLearn's sync adds to the schema for a question
    (apps/prairielearn/src/sync/course-db.ts, validateQuestion)."""
    errors = []
    if info.get("gradingMethod") == "External" and "externalGradingOptions" not in info:
        errors.append('"externalGradingOptions" is required when "gradingMethod" is "External"')
    if info.get("type") == "v3" and "options" in info:
        errors.append('"options" is not supported for v3 questions.')
    return errors


class Elements(html.parser.HTMLParser):
    """The pl- elements of a question.html, each with its attributes and its
    pl- ancestors."""

    def __init__(self):
        super().__init__()
        self.stack, self.found = [], []

    def handle_starttag(self, tag, attrs):
        if tag.startswith("pl-"):
            self.found.append((tag, dict(attrs), list(self.stack)))
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag.startswith("pl-") and tag in self.stack:
            del self.stack[len(self.stack) - 1 - self.stack[::-1].index(tag):]


def csv_names(text):
    """pl-file-upload's file-names: comma-separated, a backslash escapes a comma."""
    return [n.strip().replace("\\,", ",") for n in re.split(r"(?<!\\),", text or "") if n.strip()]


with open(os.path.join(HERE, "schemas", "prairielearn-question-info.json")) as f:
    SCHEMA = json.load(f)
with open(COURSE_FILE, "rb") as f:
    COURSE_SEED = tomllib.load(f).get("grading", {}).get("seed")

# --- the validator refuses what PrairieLearn refuses -----------------------------
good = {"uuid": "c0ad913c-d85b-40c0-afa3-3e666cfa1617", "title": "t", "topic": "t", "type": "v3",
        "gradingMethod": "External", "externalGradingOptions": {"image": "i", "timeout": 60}}
check(validate(good, SCHEMA, SCHEMA) == [], "the validator accepts a minimal externally graded question")
refused = {
    "without a uuid": lambda d: d.pop("uuid"),
    "with a uuid that is not one": lambda d: d.update(uuid="lab03"),
    "without a type": lambda d: d.pop("type"),
    "with gradingMethod \"external\" (PrairieLearn's enum is capitalised)": lambda d: d.update(gradingMethod="external"),
    "with a property PrairieLearn does not know": lambda d: d.update(gradingmethod="External"),
    "with externalGradingOptions without an image": lambda d: d["externalGradingOptions"].pop("image"),
    "with an unknown externalGradingOptions field": lambda d: d["externalGradingOptions"].update(gpus=1),
    "with a timeout given as a string": lambda d: d["externalGradingOptions"].update(timeout="600"),
    "with an entrypoint that is a number": lambda d: d["externalGradingOptions"].update(entrypoint=1),
    "with tags that are not strings": lambda d: d.update(tags=[3]),
    "with an environment variable that is not a string": lambda d: d["externalGradingOptions"].update(
        environment={"CUDALAB_COURSE": 1}),
}
for what, change in refused.items():
    bad = copy.deepcopy(good)
    change(bad)
    errors = validate(bad, SCHEMA, SCHEMA)
    check(errors != [], f"the validator refuses a question {what}: {errors[:1]}")
check(pl_sync_errors({"gradingMethod": "External"}) != [],
      "gradingMethod External without externalGradingOptions is refused (as PrairieLearn's sync does)")
try:
    validate({}, {"type": "object", "if": {}}, {})
    check(False, "the validator fails on a keyword it does not know")
except ValueError:
    check(True, "the validator fails on a keyword it does not know")

# --- every example question ----------------------------------------------------
folders = sorted(d for d in os.listdir(QUESTIONS) if os.path.isfile(os.path.join(QUESTIONS, d, "info.json")))
check(len(folders) > 0, f"there is an example question in {QUESTIONS}: {folders}")
uuids = []
for q in folders:
    qdir = os.path.join(QUESTIONS, q)
    with open(os.path.join(qdir, "info.json")) as f:
        info = json.load(f)
    errors = validate(info, SCHEMA, SCHEMA) + pl_sync_errors(info)
    check(errors == [], f"{q}/info.json is valid against PrairieLearn's schema: {errors}")
    uuids.append(info.get("uuid"))
    check(info.get("type") == "v3" and info.get("gradingMethod") == "External",
          f"{q}: a v3 question, graded externally")
    ext = info.get("externalGradingOptions", {})
    entry = ext.get("entrypoint")
    check(entry == ENTRYPOINT, f"{q}: its entrypoint is run_prairielearn in the image: {entry}")
    in_tree = os.path.join(SRC, ENTRYPOINT[len(IMAGE_ROOT):])
    check(os.access(in_tree, os.X_OK), f"{q}: which is an executable of this tree ({in_tree})")
    check(ext.get("enabled", True) is True, f"{q}: external grading is not switched off")
    timeout = ext.get("timeout", 30)  # PrairieLearn's default
    check(0 < timeout <= PL_MAX_TIMEOUT_S, f"{q}: timeout {timeout} s within PrairieLearn's {PL_MAX_TIMEOUT_S} s")

    course_file = os.path.join(qdir, "tests", "course.toml")
    check(os.path.isfile(course_file), f"{q}: has tests/course.toml (PrairieLearn puts it at /grade/tests/)")
    with open(course_file, "rb") as f:
        course = tomllib.load(f)
    grading = course.get("grading", {})
    check(grading.get("cpu_mode") is True,
          f"{q}: tests/course.toml sets cpu_mode = true (PrairieLearn's hosted graders have no GPU)")
    check(grading.get("seed") == COURSE_SEED, f"{q}: with the course's grading seed ({COURSE_SEED})")
    check(grading.get("build_timeout_s", 600) < timeout,
          f"{q}: its build limit ({grading.get('build_timeout_s', 600)} s) ends before PrairieLearn's timeout")
    labs = course.get("course", {}).get("labs", [])
    check(len(labs) > 0 and all(os.path.isfile(os.path.join(SRC, "labs", lab, "lab.toml")) for lab in labs),
          f"{q}: tests/course.toml names the labs it grades, each a lab of this tree: {labs}")
    expected = {}  # student file -> its lab
    titles = []
    for lab in labs:
        try:
            with open(os.path.join(SRC, "labs", lab, "lab.toml"), "rb") as f:
                manifest = tomllib.load(f)
        except OSError:
            continue
        titles.append(manifest["lab"]["title"])
        for name in manifest["lab"]["student_files"]:
            expected[name] = lab
    check(all(t.lower() in info.get("title", "").lower() for t in titles),
          f"{q}: the title names the lab's ({titles}): {info.get('title')!r}")

    parser = Elements()
    with open(os.path.join(qdir, "question.html")) as f:
        parser.feed(f.read())
    submitted, sources = [], {}
    for tag, attrs, parents in parser.found:
        if tag == "pl-file-editor":
            submitted.append(attrs.get("file-name"))
            sources[attrs.get("file-name")] = attrs.get("source-file-name")
            check("directory" not in attrs, f"{q}: the editor's skeleton is in the question's own folder")
        elif tag == "pl-file-upload":
            submitted += csv_names(attrs.get("file-names")) + csv_names(attrs.get("optional-file-names"))
    check(sorted(submitted) == sorted(expected),
          f"{q}: question.html submits exactly the labs' student files: {sorted(submitted)} vs {sorted(expected)}")
    check(any(t == "pl-external-grader-results" and "pl-submission-panel" in p for t, _, p in parser.found),
          f"{q}: the submission panel shows the grader's results (pl-external-grader-results)")
    for name, source in sources.items():
        if name not in expected:
            continue
        skeleton = os.path.join(SRC, "labs", expected[name], name)
        mine = os.path.join(qdir, source or "")
        same = bool(source) and os.path.isfile(mine) and open(mine, "rb").read() == open(skeleton, "rb").read()
        check(same, f"{q}: the editor starts from {source}, the same as {os.path.relpath(skeleton, SRC)} "
                    f"(refresh it with: cp {os.path.relpath(skeleton, SRC)} {os.path.relpath(qdir, SRC)}/)")
check(len(set(uuids)) == len(uuids), "every question has a uuid of its own")

finish()
