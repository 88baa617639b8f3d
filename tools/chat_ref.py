#!/usr/bin/env python3
"""Reference chat-template renderer: writes the expected outputs in data/chat/.

    python3 tools/chat_ref.py TEMPLATE.jinja CONV.json [BOS EOS]   # print one rendering
    python3 tools/chat_ref.py --regen                              # rewrite data/chat/*.out

Needs Python's jinja2 (pip install jinja2). It sets jinja2 up the way Hugging Face
transformers' apply_chat_template does, which is what infer's own interpreter (>>jinja in
infer.h) must reproduce byte for byte: a sandbox with immutable lists and dicts,
trim_blocks and lstrip_blocks on, the loop controls, a {% generation %} tag that renders
its body, a tojson that is json.dumps (no HTML escaping), raise_exception and
strftime_now; tools and documents default to None. A rendering that raises is written as
"ERROR: <message>". The test chat_template_files compares against these files.
"""
import datetime
import glob
import json
import os
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Generation(jinja2.ext.Extension):
    tags = {"generation"}

    def parse(self, parser):
        line = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(line)

    def _body(self, caller):
        return caller()


def _raise(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def render(template, variables, bos=None, eos=None):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
    args = {"tools": None, "documents": None, "add_generation_prompt": False}
    if bos is not None:
        args["bos_token"] = bos
    if eos is not None:
        args["eos_token"] = eos
    args.update(variables)
    return env.from_string(template).render(**args)


# data/chat: each template with the special tokens its model has
TEMPLATES = {
    "qwen3.5": (None, "<|im_end|>"),
    "mistral-nemo": ("<s>", "</s>"),
    "deepseek-r1-distill": ("<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"),
    "phi-3.5": ("<s>", "<|endoftext|>"),
}


def regen(folder):
    for name, (bos, eos) in TEMPLATES.items():
        with open(os.path.join(folder, name + ".jinja"), encoding="utf-8") as f:
            template = f.read()
        for conv in sorted(glob.glob(os.path.join(folder, "conv-*.json"))):
            with open(conv, encoding="utf-8") as f:
                variables = json.load(f)
            try:
                text = render(template, variables, bos, eos)
            except Exception as e:  # the template refused the conversation
                text = "ERROR: %s" % e
            out = os.path.join(folder, "%s.%s.out" % (name, os.path.basename(conv)[5:-5]))
            with open(out, "w", encoding="utf-8", newline="") as f:
                f.write(text)


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--regen":
        regen(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "chat"))
    elif len(sys.argv) in (3, 5):
        with open(sys.argv[1], encoding="utf-8") as f:
            template = f.read()
        with open(sys.argv[2], encoding="utf-8") as f:
            variables = json.load(f)
        sys.stdout.write(render(template, variables, *(sys.argv[3:5] or [None, None])))
    else:
        sys.exit(__doc__)
