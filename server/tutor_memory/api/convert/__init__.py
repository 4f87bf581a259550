"""Proto messages to the use cases' inputs and their results back to proto, one module per area
(episodes, blocks, files and the map, beliefs and reports); every enum table once, in enums.py.
Nothing here touches storage or the network."""
