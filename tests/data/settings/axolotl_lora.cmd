accelerate launch -m axolotl.cli.train examples/openllama-3b/lora.yml
