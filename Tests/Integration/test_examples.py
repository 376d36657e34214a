"""The example configurations a user runs pass `latchkey check` as soon as the secrets they
name exist: every file under Configs/ (subdirectories too), the Compose one, and the one
inside the Kubernetes ConfigMap. A new example is checked by being there
(example_configs.CONFIG_GLOBS)."""

import pytest

from example_configs import example_configs, materialise, references

import yaml

CONFIGS = example_configs()


def test_the_examples_are_found():
    assert {"Configs/latchkey.example.yaml", "Configs/kii.yaml", "Configs/systemd/latchkey.yaml",
            "Docker/compose/latchkey.yaml",
            "Configs/kubernetes/configmap.yaml:latchkey-config/latchkey.yaml"} <= set(CONFIGS)


@pytest.mark.parametrize("label", sorted(CONFIGS))
def test_example_passes_check_once_its_secrets_exist(latchkey, tmp_path, label):
    made = materialise(CONFIGS[label], tmp_path)
    result = latchkey.run(["check", "--config", str(made.config)], env=made.env)
    assert result.returncode == 0, f"{label} (secrets: {sorted(made.files) + sorted(made.env)}):\n{result.stderr}"
    assert result.stdout.startswith("config OK"), result.stdout


@pytest.mark.parametrize("label", sorted(label for label, text in CONFIGS.items() if references(yaml.safe_load(text))))
def test_without_its_secrets_check_names_each_one(latchkey, tmp_path, label):
    """The control of the test above: what it created is what check needs, and check says
    which secret is missing; --skip-secrets validates the rest without them."""
    config = tmp_path / "latchkey.yaml"
    config.write_text(CONFIGS[label])
    made = materialise(CONFIGS[label], tmp_path / "made")
    result = latchkey.run(["check", "--config", str(config)], env={name: "" for name in made.env})
    assert result.returncode == 1, result.stdout
    for written in list(made.files) + list(made.env):
        assert written in result.stderr, f"{label}: check does not name {written}:\n{result.stderr}"
    skipped = latchkey.run(["check", "--config", str(config), "--skip-secrets"], env={name: "" for name in made.env})
    assert skipped.returncode == 0, skipped.stderr
