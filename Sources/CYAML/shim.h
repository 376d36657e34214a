// libyaml, the YAML 1.1 parser the configuration is read with: its events are composed
// into the document's nodes by LatchkeyConfig's YAMLComposer.
#include <yaml.h>
