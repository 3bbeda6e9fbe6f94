"""`python -m calc`: flags named as the fields, JSON for machines, exit 2 on bad input."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calc.i18n import LOCALES, t

ROOT = Path(__file__).resolve().parents[2]


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "calc", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_json_output_has_the_interface_keys():
    out = run("--model", "llama-3.1-8b", "--method", "qlora", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode"] == "detailed" and data["framework"] == "hf"  # realistic by default
    assert set(data["components"]) >= {"base_weights", "gradients", "optimizer", "activations", "overhead"}
    assert data["total_bytes"] == sum(data["components"].values()) == data["realistic_total_bytes"]
    # the textbook total beside it: 8,030,261,248 x 0.516 bytes (NF4) computed here, not by the engine
    assert data["textbook_components"]["base_weights"] == round(8_030_261_248 * 0.516)
    assert data["textbook_total_bytes"] == sum(data["textbook_components"].values())
    assert data["textbook_total_bytes"] < data["total_bytes"]
    assert data["trainable_params"] == 41_943_040


def test_planning_mode_json():
    out = run("--model", "llama-3.1-8b", "--method", "qlora", "--mode", "planning", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode"] == "planning"
    assert data["components"]["base_weights"] == round(8_030_261_248 * 0.516)
    assert data["total_bytes"] == data["textbook_total_bytes"] < data["realistic_total_bytes"]


def test_readable_breakdown():
    out = run("--model", "llama-3.1-8b", "--method", "qlora")
    assert out.returncode == 0, out.stderr
    assert "GiB" in out.stdout and "41,943,040" in out.stdout


def test_readable_breakdown_in_persian():
    out = run("--model", "llama-3.1-8b", "--locale", "fa")
    assert out.returncode == 0, out.stderr
    assert "۴۱" in out.stdout


def test_bad_input_exit_2_with_message():
    out = run("--seq", "-4", "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert "seq" in out.stderr.lower() or "sequence" in out.stderr.lower()
    assert "Traceback" not in out.stderr


def test_unknown_flag_exit_2():
    assert run("--bogus", "1").returncode == 2


def test_config_from_stdin():
    cfg = json.dumps({"num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128,
                      "num_attention_heads": 4, "vocab_size": 100})
    out = run("--config", "-", "--json", stdin=cfg)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["model"] == "custom"


def test_locales_are_calcs_own():
    """--locale offers exactly calc's locales (calc.i18n.LOCALES) and refuses any other."""
    from calc.__main__ import _parser
    from calc.i18n import LOCALES

    (action,) = [a for a in _parser()._actions if a.dest == "locale"]
    assert tuple(action.choices) == LOCALES
    assert run("--locale", "xx").returncode == 2
# --- the training stack's flags (engine.md section 6) ---------------------------------------


def test_cli_stack_flags():
    out = run("--model", "llama-3.1-8b", "--method", "qlora", "--framework", "torchtune",
              "--loss", "full", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["framework"] == "torchtune" and data["knobs"]["loss"] == "full"
    assert data["knobs"]["adapter_dtype"] == "bf16"
    out = run("--method", "qlora", "--kbit-upcast", "false", "--act-offload", "true", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["knobs"]["kbit_upcast"] is False and data["knobs"]["act_offload"] is True
    assert data["cpu_bytes"] > 0 and "kbit_upcast" not in data["components"]
    out = run("--model", "llama-3.2-3b", "--framework", "torchtune", "--compile", "true", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["knobs"]["compile"] is True and data["explicit_knobs"] == {"compile": True}
    # compiled chunked loss: 2 + 2/8 bytes per token and vocabulary entry (2048 tokens)
    assert data["components"]["logits"] == 2048 * 128256 * 9 // 4


@pytest.mark.parametrize("args", [("--framework", "megatron"), ("--loss", "sparse"),
                                  ("--opt-step", "x"), ("--act_offload", "perhaps"),
                                  ("--compile", "maybe")])
def test_cli_exits_2_on_bad_stack_input(args):
    out = run(*args, "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert "Traceback" not in out.stderr and out.stderr.startswith("error:")


@pytest.mark.parametrize("loc", LOCALES)
def test_cli_bad_compile_names_the_field_in_every_locale(loc):
    out = run("--compile", "maybe", "--locale", loc)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert t("field.compile", loc) in out.stderr and "maybe" in out.stderr


def test_cli_bad_stack_message_in_persian():
    out = run("--framework", "megatron", "--locale", "fa")
    assert out.returncode == 2
    assert t("field.framework", "fa") in out.stderr and "megatron" in out.stderr
