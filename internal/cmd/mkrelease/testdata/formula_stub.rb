# Evaluates a Homebrew formula's DSL as Homebrew would on one system and
# processor (ARGV: formula, os, arch), with Formula stubbed, and prints what
# it would fetch and install as JSON.
require "json"

FORMULA, OS, ARCH = ARGV
$got = { "install" => [] }

class Formula
  %i[desc homepage version license url sha256].each do |field|
    define_singleton_method(field) { |value| $got[field.to_s] = value }
  end
  def self.on_macos = (yield if OS == "darwin")
  def self.on_linux = (yield if OS == "linux")
  def self.on_arm = (yield if ARCH == "arm64")
  def self.on_intel = (yield if ARCH == "amd64")
  def self.test(&) = ($got["test"] = true)

  Bin = Struct.new(:dummy) do
    def install(*files) = $got["install"].concat(files)
  end
  def bin = Bin.new
end

load FORMULA
klass = Object.const_get(:MajordomusMcp)
raise "MajordomusMcp is no Formula" unless klass < Formula
klass.new.install
puts JSON.generate($got)
