# Shortcuts for the scripts in scripts/ (the README's two commands work
# without make, too).
.PHONY: deps build test demo bench lint

deps:
	bash scripts/install-deps.sh

build: deps
	cargo build --release --workspace

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

bench: build
	cargo run --release -p ticketgate-bench -- all

lint:
	cargo fmt --all --check
	cargo clippy --release --workspace --all-targets -- -D warnings
